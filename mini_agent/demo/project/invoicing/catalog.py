"""The product catalog: products by SKU, loaded from CSV text."""

import csv
import io
from dataclasses import dataclass

from .money import MoneyError, to_money

CATEGORIES = ("paper", "pens", "art", "office", "books")


class CatalogError(ValueError):
    """A product or a catalog file is invalid; the message names the row or SKU."""


@dataclass(frozen=True)
class Product:
    """One product. unit_price is a Decimal in the shop's currency, per unit."""

    sku: str
    name: str
    unit_price: object
    category: str = "office"
    taxable: bool = True

    def __post_init__(self):
        if not self.sku or not self.sku.replace("-", "").isalnum():
            raise CatalogError(f"invalid SKU {self.sku!r}: use letters, digits and '-'")
        if self.category not in CATEGORIES:
            raise CatalogError(f"{self.sku}: unknown category {self.category!r}")
        if self.unit_price < 0:
            raise CatalogError(f"{self.sku}: unit price must not be negative")


class Catalog:
    """Products indexed by SKU (case-insensitive)."""

    def __init__(self, products=()):
        self._products = {}
        for product in products:
            self.add(product)

    def add(self, product):
        """Add a product; raises CatalogError if the SKU is already present."""
        key = product.sku.upper()
        if key in self._products:
            raise CatalogError(f"duplicate SKU {product.sku}")
        self._products[key] = product

    def get(self, sku):
        """Return the product with this SKU; raises KeyError with the SKU if it is missing."""
        try:
            return self._products[sku.upper()]
        except KeyError:
            raise KeyError(f"no product with SKU {sku!r}") from None

    def find(self, text):
        """Return the products whose name contains `text` (case-insensitive), sorted by SKU."""
        needle = text.lower()
        return sorted((p for p in self._products.values() if needle in p.name.lower()),
                      key=lambda p: p.sku)

    def by_category(self, category):
        """Return the products of one category, sorted by SKU."""
        return sorted((p for p in self._products.values() if p.category == category),
                      key=lambda p: p.sku)

    def __len__(self):
        return len(self._products)

    def __contains__(self, sku):
        return sku.upper() in self._products


def load_catalog_csv(text):
    """Build a Catalog from CSV text with the header sku,name,unit_price,category,taxable.

    `taxable` is "yes" or "no" (default "yes" when the column is empty). Blank lines are
    skipped. Raises CatalogError naming the line number of the first bad row.
    """
    reader = csv.DictReader(io.StringIO(text.strip()))
    expected = ["sku", "name", "unit_price", "category", "taxable"]
    if reader.fieldnames != expected:
        raise CatalogError(f"expected header {','.join(expected)}, got {reader.fieldnames}")
    catalog = Catalog()
    for line_number, row in enumerate(reader, start=2):
        if not any((value or "").strip() for value in row.values()):
            continue
        try:
            price = to_money(row["unit_price"])
        except MoneyError as exc:
            raise CatalogError(f"line {line_number}: {exc}") from None
        taxable_text = (row["taxable"] or "yes").strip().lower()
        if taxable_text not in ("yes", "no"):
            raise CatalogError(f"line {line_number}: taxable must be yes or no")
        try:
            catalog.add(Product(row["sku"].strip(), row["name"].strip(), price,
                                row["category"].strip(), taxable_text == "yes"))
        except CatalogError as exc:
            raise CatalogError(f"line {line_number}: {exc}") from None
    return catalog
