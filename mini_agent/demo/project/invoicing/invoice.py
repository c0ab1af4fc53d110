"""Invoices: lines of products, bulk discounts, a coupon, sales tax, and the rendered text."""

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from .discounts import apply_coupon, bulk_discount_rate, describe_tiers
from .money import format_money, round_money, sum_money
from .tax import tax_rate


class InvoiceError(ValueError):
    """An invoice line or invoice field is invalid."""


@dataclass(frozen=True)
class InvoiceLine:
    """One product and a quantity; the bulk discount depends on the quantity of this line."""

    product: object
    quantity: int

    @property
    def gross(self):
        """Unit price times quantity, before any discount (not rounded)."""
        return self.product.unit_price * self.quantity

    @property
    def discount_rate(self):
        """The bulk discount rate reached by this line's quantity."""
        return bulk_discount_rate(self.quantity)

    @property
    def amount(self):
        """The line amount after the bulk discount, rounded to cents."""
        return round_money(self.gross * (1 - self.discount_rate))


class Invoice:
    """An invoice for one customer, shipped to one tax region.

    Adding the same product twice adds to its line, so the bulk discount sees the whole
    quantity. Amounts are recomputed from the lines on every call.
    """

    def __init__(self, number, customer, region, *, coupon=None, issued=None, currency="USD"):
        if not number:
            raise InvoiceError("an invoice needs a number")
        tax_rate(region)  # fail early on an unknown region
        self.number = number
        self.customer = customer
        self.region = region
        self.coupon = coupon
        self.issued = issued or date(2024, 1, 1)
        self.currency = currency
        self._lines = {}

    @classmethod
    def from_order(cls, catalog, number, customer, region, items, **options):
        """Build an invoice from (sku, quantity) pairs looked up in `catalog`.

        Raises InvoiceError naming the first unknown SKU, so an order is never half-built.
        """
        invoice = cls(number, customer, region, **options)
        for sku, quantity in items:
            if sku not in catalog:
                raise InvoiceError(f"order {number}: unknown SKU {sku!r}")
            invoice.add(catalog.get(sku), quantity)
        return invoice

    def add(self, product, quantity=1):
        """Add `quantity` units of `product`; raises InvoiceError if quantity < 1."""
        if quantity < 1:
            raise InvoiceError(f"quantity must be at least 1, got {quantity}")
        current = self._lines.get(product.sku)
        total = quantity + (current.quantity if current else 0)
        self._lines[product.sku] = InvoiceLine(product, total)
        return self

    @property
    def lines(self):
        """The invoice lines, in the order their products were first added."""
        return list(self._lines.values())

    def subtotal(self):
        """The sum of the line amounts (after bulk discounts, before the coupon)."""
        return sum_money(line.amount for line in self.lines)

    def coupon_discount(self):
        """The coupon's discount on the subtotal (0.00 without a usable coupon)."""
        return apply_coupon(self.subtotal(), self.coupon, self.issued)

    def tax(self):
        """Sales tax on the taxable lines, after spreading the coupon over all lines."""
        subtotal = self.subtotal()
        if subtotal == 0:
            return Decimal("0.00")
        share_kept = 1 - self.coupon_discount() / subtotal
        tax = Decimal("0")
        for line in self.lines:
            if line.product.taxable:
                rate = tax_rate(self.region, line.product.category)
                tax += line.amount * share_kept * rate
        return round_money(tax)

    def total(self):
        """What the customer pays: subtotal - coupon discount + tax."""
        return self.subtotal() - self.coupon_discount() + self.tax()

    def summary(self):
        """Return the invoice's figures as a dict of strings, for export to accounting."""
        return {
            "number": self.number,
            "customer": self.customer,
            "region": self.region,
            "lines": str(len(self.lines)),
            "units": str(sum(line.quantity for line in self.lines)),
            "subtotal": str(self.subtotal()),
            "coupon": str(self.coupon_discount()),
            "tax": str(self.tax()),
            "total": str(self.total()),
        }

    def render(self):
        """Return the invoice as plain text, one row per line, then the totals."""
        money = lambda amount: format_money(amount, self.currency)  # noqa: E731
        rows = [f"Invoice {self.number} for {self.customer} ({self.region}), "
                f"issued {self.issued.isoformat()}", ""]
        for line in self.lines:
            discount = f" -{line.discount_rate * 100:.0f}%" if line.discount_rate else ""
            rows.append(f"{line.quantity:>4} x {line.product.name:<24} "
                        f"{money(line.product.unit_price):>10}{discount:>5} "
                        f"{money(line.amount):>11}")
        rows.append("")
        rows.append(f"{'Subtotal':<46}{money(self.subtotal()):>11}")
        if self.coupon_discount():
            rows.append(f"{'Coupon ' + self.coupon.code:<46}"
                        f"{money(-self.coupon_discount()):>11}")
        rows.append(f"{'Tax':<46}{money(self.tax()):>11}")
        rows.append(f"{'Total':<46}{money(self.total()):>11}")
        rows.append("")
        rows.append(describe_tiers())
        return "\n".join(rows)
