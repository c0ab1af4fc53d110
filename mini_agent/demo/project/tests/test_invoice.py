import unittest
from datetime import date
from decimal import Decimal

from invoicing.catalog import Catalog, Product
from invoicing.discounts import Coupon
from invoicing.invoice import Invoice, InvoiceError

NOTEBOOK = Product("NB-A5", "A5 notebook", Decimal("4.99"), "paper")
PEN = Product("PEN-BLK", "Black gel pen", Decimal("1.25"), "pens")
GUIDE = Product("BK-STYLE", "Style guide", Decimal("18.00"), "books", taxable=False)


class InvoiceTests(unittest.TestCase):
    def test_small_order(self):
        invoice = Invoice("INV-1", "Ada", "NY").add(PEN, 4).add(GUIDE, 1)
        self.assertEqual(invoice.subtotal(), Decimal("23.00"))
        self.assertEqual(invoice.tax(), Decimal("0.40"))
        self.assertEqual(invoice.total(), Decimal("23.40"))

    def test_adding_twice_merges_the_line(self):
        invoice = Invoice("INV-2", "Ada", "OR").add(PEN, 20).add(PEN, 10)
        self.assertEqual(len(invoice.lines), 1)
        self.assertEqual(invoice.lines[0].quantity, 30)
        self.assertEqual(invoice.subtotal(), Decimal("33.75"))

    def test_total_with_bulk_discount(self):
        # 10 notebooks: 49.90 - 5% = 47.405, which rounds half up to 47.41; tax 8% = 3.79.
        invoice = Invoice("INV-3", "Grace", "NY").add(NOTEBOOK, 10)
        self.assertEqual(invoice.total(), Decimal("51.20"))

    def test_coupon_reduces_tax_base(self):
        coupon = Coupon("SPRING20", percent_off=Decimal("0.20"))
        invoice = Invoice("INV-4", "Alan", "CA", coupon=coupon, issued=date(2024, 3, 1))
        invoice.add(PEN, 40)
        self.assertEqual(invoice.subtotal(), Decimal("45.00"))
        self.assertEqual(invoice.coupon_discount(), Decimal("9.00"))
        self.assertEqual(invoice.tax(), Decimal("2.61"))
        self.assertEqual(invoice.total(), Decimal("38.61"))

    def test_render(self):
        invoice = Invoice("INV-5", "Ada", "OR").add(PEN, 30)
        text = invoice.render()
        self.assertIn("Invoice INV-5 for Ada (OR), issued 2024-01-01", text)
        self.assertIn("  30 x Black gel pen", text)
        self.assertIn("-10%", text)
        self.assertIn("$33.75", text)
        self.assertTrue(text.endswith("Bulk prices: 10+ units -5%, 25+ units -10%, "
                                      "50+ units -15%"))

    def test_from_order_and_summary(self):
        catalog = Catalog([PEN, GUIDE])
        invoice = Invoice.from_order(catalog, "INV-7", "Ada", "OR",
                                     [("pen-blk", 2), ("BK-STYLE", 1)])
        self.assertEqual(invoice.summary()["units"], "3")
        self.assertEqual(invoice.summary()["total"], "20.50")
        with self.assertRaisesRegex(InvoiceError, "unknown SKU 'NOPE'"):
            Invoice.from_order(catalog, "INV-8", "Ada", "OR", [("NOPE", 1)])

    def test_invalid_input(self):
        with self.assertRaises(InvoiceError):
            Invoice("", "Ada", "NY")
        with self.assertRaises(InvoiceError):
            Invoice("INV-6", "Ada", "NY").add(PEN, 0)


if __name__ == "__main__":
    unittest.main()
