"""Sales tax per region, with categories some regions exempt (README, rule 4)."""

from decimal import Decimal

from .money import round_money

TAX_RATES = {
    "CA": Decimal("0.0725"),
    "NY": Decimal("0.08"),
    "OR": Decimal("0"),
    "TX": Decimal("0.0625"),
    "WA": Decimal("0.065"),
}

EXEMPT_CATEGORIES = {
    "NY": frozenset({"books"}),
    "TX": frozenset({"books", "paper"}),
}


class TaxError(ValueError):
    """The region is not one the shop ships to."""


def tax_rate(region, category="office"):
    """Return the tax rate (a fraction) for a product category shipped to `region`.

    tax_rate("NY") == Decimal("0.08"); tax_rate("NY", "books") == 0.
    Raises TaxError for an unknown region code.
    """
    code = region.strip().upper()
    if code not in TAX_RATES:
        known = ", ".join(sorted(TAX_RATES))
        raise TaxError(f"unknown region {region!r}; known regions: {known}")
    if category in EXEMPT_CATEGORIES.get(code, ()):
        return Decimal("0")
    return TAX_RATES[code]


def tax_on(amount, region, category="office"):
    """Return the tax on `amount` for one category in `region`, rounded to cents."""
    return round_money(amount * tax_rate(region, category))
