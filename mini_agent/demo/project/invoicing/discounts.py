"""Bulk discount tiers and coupon codes (README, rules 2 and 3)."""

import re
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from .money import round_money, to_money

COUPON_CODE = re.compile(r"^[A-Z0-9]{4,12}$")


class DiscountError(ValueError):
    """A quantity, tier table or coupon is invalid."""


@dataclass(frozen=True)
class Tier:
    """Lines of at least `min_quantity` units get `rate` off (a fraction: 0.05 is 5%)."""

    min_quantity: int
    rate: Decimal


BULK_TIERS = (
    Tier(10, Decimal("0.05")),
    Tier(25, Decimal("0.10")),
    Tier(50, Decimal("0.15")),
)


def check_tiers(tiers):
    """Raise DiscountError unless the tiers have distinct minimums and rates in [0, 1)."""
    minimums = [tier.min_quantity for tier in tiers]
    if len(set(minimums)) != len(minimums):
        raise DiscountError("two tiers share a minimum quantity")
    for tier in tiers:
        if tier.min_quantity < 1:
            raise DiscountError(f"tier minimum must be at least 1, got {tier.min_quantity}")
        if not Decimal("0") <= tier.rate < Decimal("1"):
            raise DiscountError(f"tier rate must be in [0, 1), got {tier.rate}")


def bulk_discount_rate(quantity, tiers=BULK_TIERS):
    """Return the discount rate for a line of `quantity` units: the best tier reached.

    bulk_discount_rate(9) == 0, bulk_discount_rate(30) == Decimal("0.10").
    Raises DiscountError for a negative quantity.
    """
    if quantity < 0:
        raise DiscountError(f"quantity must not be negative, got {quantity}")
    rate = Decimal("0")
    for tier in sorted(tiers, key=lambda t: t.min_quantity):
        if quantity > tier.min_quantity:
            rate = tier.rate
    return rate


def describe_tiers(tiers=BULK_TIERS):
    """Return the footer line printed on invoices, e.g. "Bulk prices: 10+ units -5%, ..."."""
    parts = [f"{tier.min_quantity}+ units -{tier.rate * 100:.0f}%"
             for tier in sorted(tiers, key=lambda t: t.min_quantity)]
    return "Bulk prices: " + ", ".join(parts)


@dataclass(frozen=True)
class Coupon:
    """A coupon: either `percent_off` (0.2 is 20%) or `amount_off`, never both.

    `min_subtotal` is the smallest subtotal it applies to; `expires` is the last day it is
    valid (inclusive), or None for no expiry.
    """

    code: str
    percent_off: Decimal = None
    amount_off: Decimal = None
    min_subtotal: Decimal = Decimal("0")
    expires: date = None

    def __post_init__(self):
        if not COUPON_CODE.match(self.code):
            raise DiscountError(f"invalid coupon code {self.code!r}: 4-12 letters or digits")
        if (self.percent_off is None) == (self.amount_off is None):
            raise DiscountError(f"coupon {self.code}: set exactly one of percent_off, amount_off")
        if self.percent_off is not None and not Decimal("0") < self.percent_off <= Decimal("1"):
            raise DiscountError(f"coupon {self.code}: percent_off must be in (0, 1]")


def normalize_code(text):
    """Return a coupon code as typed by a customer, upper-cased and without spaces or dashes."""
    return re.sub(r"[\s-]", "", text).upper()


def is_expired(coupon, today):
    """True if `today` is after the coupon's last valid day."""
    return coupon.expires is not None and today > coupon.expires


def apply_coupon(subtotal, coupon, today):
    """Return the coupon's discount on `subtotal` (rounded to cents, never above the subtotal).

    Returns Decimal("0.00") when there is no coupon, the coupon has expired, or the subtotal
    is below the coupon's minimum.
    """
    subtotal = to_money(subtotal)
    if coupon is None or is_expired(coupon, today) or subtotal < coupon.min_subtotal:
        return Decimal("0.00")
    if coupon.percent_off is not None:
        discount = subtotal * coupon.percent_off
    else:
        discount = to_money(coupon.amount_off)
    return round_money(min(discount, subtotal))
