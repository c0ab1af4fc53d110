import unittest
from decimal import Decimal

from invoicing.tax import TaxError, tax_on, tax_rate


class TaxTests(unittest.TestCase):
    def test_rates_by_region(self):
        self.assertEqual(tax_rate("NY"), Decimal("0.08"))
        self.assertEqual(tax_rate(" ca "), Decimal("0.0725"))
        self.assertEqual(tax_rate("OR"), Decimal("0"))

    def test_exempt_categories(self):
        self.assertEqual(tax_rate("NY", "books"), Decimal("0"))
        self.assertEqual(tax_rate("TX", "paper"), Decimal("0"))
        self.assertEqual(tax_rate("CA", "books"), Decimal("0.0725"))

    def test_tax_on_amount(self):
        self.assertEqual(tax_on(Decimal("19.99"), "CA"), Decimal("1.45"))
        self.assertEqual(tax_on(Decimal("100.00"), "TX", "pens"), Decimal("6.25"))

    def test_unknown_region(self):
        with self.assertRaisesRegex(TaxError, "known regions: CA, NY, OR, TX, WA"):
            tax_rate("ZZ")


if __name__ == "__main__":
    unittest.main()
