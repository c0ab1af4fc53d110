"""Decimal money helpers: parse amounts, round them to cents, format them for invoices.

All amounts are decimal.Decimal. Floats are refused on purpose: 0.1 + 0.2 is not 0.3 in
binary floating point, and an invoice must add up to the cent.
"""

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

CENT = Decimal("0.01")
PERCENT_STEP = Decimal("0.1")
CURRENCY_SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£"}


class MoneyError(ValueError):
    """An amount could not be parsed or is not allowed."""


def to_money(value):
    """Convert an int, a Decimal or a numeric string such as "12.50" to a Decimal.

    Raises MoneyError for floats, booleans, and strings that are not numbers.
    """
    if isinstance(value, bool) or isinstance(value, float):
        raise MoneyError(f"use a string or Decimal for money, not {type(value).__name__}")
    if isinstance(value, Decimal):
        amount = value
    elif isinstance(value, int):
        amount = Decimal(value)
    elif isinstance(value, str):
        cleaned = value.strip().replace(",", "")
        for symbol in CURRENCY_SYMBOLS.values():
            cleaned = cleaned.removeprefix(symbol)
        try:
            amount = Decimal(cleaned)
        except InvalidOperation:
            raise MoneyError(f"not an amount: {value!r}") from None
    else:
        raise MoneyError(f"not an amount: {value!r}")
    if not amount.is_finite():
        raise MoneyError(f"not a finite amount: {value!r}")
    return amount


def round_money(amount):
    """Round an amount to whole cents; halves round up (2.675 -> 2.68), as accounting does."""
    return amount.quantize(CENT)


def round_percent(rate):
    """Express a rate as a percentage with one decimal place: Decimal("0.0825") -> 8.3."""
    return (rate * 100).quantize(PERCENT_STEP, rounding=ROUND_HALF_UP)


def sum_money(amounts):
    """Add amounts exactly, then round the total to cents. An empty input gives 0.00."""
    total = sum((to_money(a) for a in amounts), Decimal("0"))
    return round_money(total)


def allocate(amount, parts):
    """Split an amount into `parts` cent amounts that add up exactly to the rounded amount.

    The first shares get the leftover cents: allocate(Decimal("10.00"), 3) gives
    [3.34, 3.33, 3.33]. Raises MoneyError if parts < 1.
    """
    if parts < 1:
        raise MoneyError("parts must be at least 1")
    cents = int(round_money(amount) / CENT)
    base, extra = divmod(cents, parts)
    return [(Decimal(base + (1 if i < extra else 0)) * CENT) for i in range(parts)]


def format_money(amount, currency="USD"):
    """Format an amount for an invoice: format_money(Decimal("1234.5")) == "$1,234.50".

    Negative amounts get a leading minus sign: "-$3.00". Unknown currencies are shown by
    code: "1,234.50 CHF".
    """
    rounded = round_money(to_money(amount))
    sign = "-" if rounded < 0 else ""
    digits = f"{abs(rounded):,.2f}"
    symbol = CURRENCY_SYMBOLS.get(currency)
    if symbol is None:
        return f"{sign}{digits} {currency}"
    return f"{sign}{symbol}{digits}"
