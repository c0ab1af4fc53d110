import unittest
from datetime import date
from decimal import Decimal

from invoicing.discounts import (BULK_TIERS, Coupon, DiscountError, Tier, apply_coupon,
                                 bulk_discount_rate, check_tiers, normalize_code)


class BulkDiscountTests(unittest.TestCase):
    def test_no_discount_below_the_first_tier(self):
        self.assertEqual(bulk_discount_rate(1), Decimal("0"))
        self.assertEqual(bulk_discount_rate(9), Decimal("0"))

    def test_rate_applies_from_tier_minimum(self):
        # README, rule 2: "10 or more" units get 5% off.
        self.assertEqual(bulk_discount_rate(10), Decimal("0.05"))

    def test_higher_tiers(self):
        self.assertEqual(bulk_discount_rate(30), Decimal("0.10"))
        self.assertEqual(bulk_discount_rate(80), Decimal("0.15"))

    def test_negative_quantity(self):
        with self.assertRaises(DiscountError):
            bulk_discount_rate(-1)

    def test_default_tiers_are_valid(self):
        check_tiers(BULK_TIERS)
        with self.assertRaises(DiscountError):
            check_tiers([Tier(5, Decimal("0.1")), Tier(5, Decimal("0.2"))])


class CouponTests(unittest.TestCase):
    def test_percent_coupon(self):
        coupon = Coupon("SPRING20", percent_off=Decimal("0.20"))
        self.assertEqual(apply_coupon(Decimal("80.00"), coupon, date(2024, 3, 1)),
                         Decimal("16.00"))

    def test_amount_coupon_is_capped_at_subtotal(self):
        coupon = Coupon("TAKE5", amount_off=Decimal("5.00"))
        self.assertEqual(apply_coupon(Decimal("3.20"), coupon, date(2024, 3, 1)),
                         Decimal("3.20"))

    def test_minimum_and_expiry(self):
        coupon = Coupon("BIG10", percent_off=Decimal("0.10"), min_subtotal=Decimal("50"),
                        expires=date(2024, 3, 31))
        self.assertEqual(apply_coupon(Decimal("49.99"), coupon, date(2024, 3, 1)),
                         Decimal("0.00"))
        self.assertEqual(apply_coupon(Decimal("60.00"), coupon, date(2024, 3, 31)),
                         Decimal("6.00"))
        self.assertEqual(apply_coupon(Decimal("60.00"), coupon, date(2024, 4, 1)),
                         Decimal("0.00"))

    def test_codes(self):
        self.assertEqual(normalize_code(" spring-20 "), "SPRING20")
        with self.assertRaises(DiscountError):
            Coupon("no", percent_off=Decimal("0.1"))
        with self.assertRaises(DiscountError):
            Coupon("BOTH1", percent_off=Decimal("0.1"), amount_off=Decimal("1"))


if __name__ == "__main__":
    unittest.main()
