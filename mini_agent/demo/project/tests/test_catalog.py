import unittest
from decimal import Decimal

from invoicing.catalog import Catalog, CatalogError, Product, load_catalog_csv

CSV = """
sku,name,unit_price,category,taxable
NB-A5,A5 notebook,4.99,paper,yes
PEN-BLK,Black gel pen,1.25,pens,
BK-STYLE,Style guide,18.00,books,no
"""


class CatalogTests(unittest.TestCase):
    def test_loads_csv(self):
        catalog = load_catalog_csv(CSV)
        self.assertEqual(len(catalog), 3)
        self.assertEqual(catalog.get("nb-a5").unit_price, Decimal("4.99"))
        self.assertTrue(catalog.get("PEN-BLK").taxable)
        self.assertFalse(catalog.get("BK-STYLE").taxable)

    def test_find_and_by_category(self):
        catalog = load_catalog_csv(CSV)
        self.assertEqual([p.sku for p in catalog.find("PEN")], ["PEN-BLK"])
        self.assertEqual([p.sku for p in catalog.by_category("books")], ["BK-STYLE"])

    def test_bad_rows_name_the_line(self):
        bad = CSV.replace("1.25", "one")
        with self.assertRaisesRegex(CatalogError, "line 3"):
            load_catalog_csv(bad)

    def test_duplicate_sku(self):
        product = Product("X-1", "Thing", Decimal("1.00"))
        with self.assertRaises(CatalogError):
            Catalog([product, product])

    def test_missing_sku_is_a_key_error(self):
        with self.assertRaisesRegex(KeyError, "NOPE"):
            Catalog().get("NOPE")


if __name__ == "__main__":
    unittest.main()
