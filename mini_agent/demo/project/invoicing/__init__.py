"""invoicing: price orders and render plain-text invoices.

The public names are re-exported here; see README.md for the pricing rules.
"""

from .catalog import Catalog, Product, load_catalog_csv
from .discounts import Coupon, apply_coupon, bulk_discount_rate
from .invoice import Invoice, InvoiceLine
from .money import format_money, round_money, to_money
from .tax import tax_rate

__all__ = [
    "Catalog", "Coupon", "Invoice", "InvoiceLine", "Product", "apply_coupon",
    "bulk_discount_rate", "format_money", "load_catalog_csv", "round_money", "tax_rate",
    "to_money",
]
