import unittest
from decimal import Decimal

from invoicing.money import (MoneyError, allocate, format_money, round_money, round_percent,
                             sum_money, to_money)


class ToMoneyTests(unittest.TestCase):
    def test_parses_strings_ints_and_decimals(self):
        self.assertEqual(to_money("12.50"), Decimal("12.50"))
        self.assertEqual(to_money(" $1,200.00 "), Decimal("1200.00"))
        self.assertEqual(to_money(7), Decimal("7"))
        self.assertEqual(to_money(Decimal("0.10")), Decimal("0.10"))

    def test_refuses_floats_and_garbage(self):
        for bad in (0.1, True, "twelve", "NaN", None):
            with self.assertRaises(MoneyError):
                to_money(bad)


class RoundingTests(unittest.TestCase):
    def test_round_money_to_cents(self):
        self.assertEqual(round_money(Decimal("2.344")), Decimal("2.34"))
        self.assertEqual(round_money(Decimal("2.346")), Decimal("2.35"))
        self.assertEqual(round_money(Decimal("-1.231")), Decimal("-1.23"))

    def test_round_percent(self):
        self.assertEqual(round_percent(Decimal("0.0825")), Decimal("8.3"))
        self.assertEqual(round_percent(Decimal("0.05")), Decimal("5.0"))

    def test_sum_money(self):
        self.assertEqual(sum_money(["0.10", "0.20", "0.30"]), Decimal("0.60"))
        self.assertEqual(sum_money([]), Decimal("0.00"))


class AllocateTests(unittest.TestCase):
    def test_leftover_cents_go_first(self):
        self.assertEqual(allocate(Decimal("10.00"), 3),
                         [Decimal("3.34"), Decimal("3.33"), Decimal("3.33")])

    def test_parts_add_up(self):
        shares = allocate(Decimal("99.99"), 7)
        self.assertEqual(sum(shares), Decimal("99.99"))
        self.assertEqual(len(shares), 7)

    def test_rejects_zero_parts(self):
        with self.assertRaises(MoneyError):
            allocate(Decimal("1.00"), 0)


class FormatTests(unittest.TestCase):
    def test_formats_with_symbol_and_separators(self):
        self.assertEqual(format_money(Decimal("1234.5")), "$1,234.50")
        self.assertEqual(format_money(Decimal("-3"), "EUR"), "-€3.00")
        self.assertEqual(format_money("1234.5", "CHF"), "1,234.50 CHF")


if __name__ == "__main__":
    unittest.main()
