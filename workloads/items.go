package workloads

// ItemAttr is one attribute of an Item, as a design stores it: a field of an item's
// user-defined type (Cassandra) or of an item document (MongoDB).
type ItemAttr uint8

// Item attributes.
const (
	ItemProductID ItemAttr = iota + 1
	ItemSKU
	ItemName
	ItemCategory
	ItemQuantity
	ItemPrice
	ItemAddedAt
	ItemImageURL
)

// ItemAttrNames lists the names a design may give item attributes, aliases included.
var ItemAttrNames = []string{"product_id", "product_sku", "sku", "name", "product_name", "category", "quantity", "qty", "price", "added_at",
	"image_url", "product_image_url"}

// ItemAttrOf is the attribute a name (one of ItemAttrNames) gives; 0 for any other name.
func ItemAttrOf(name string) ItemAttr {
	switch name {
	case "product_id":
		return ItemProductID
	case "product_sku", "sku":
		return ItemSKU
	case "name", "product_name":
		return ItemName
	case "category":
		return ItemCategory
	case "quantity", "qty":
		return ItemQuantity
	case "price":
		return ItemPrice
	case "added_at":
		return ItemAddedAt
	case "image_url", "product_image_url":
		return ItemImageURL
	}
	return 0
}

// Type is the attribute's natural type.
func (a ItemAttr) Type() Type {
	switch a {
	case ItemProductID:
		return TUUID
	case ItemQuantity:
		return TInt
	case ItemPrice:
		return TDecimal
	case ItemAddedAt:
		return TTimestamp
	}
	return TText
}

// Attr is the item's value of an attribute (null for 0).
func (it *Item) Attr(a ItemAttr) Value {
	switch a {
	case ItemProductID:
		return Value{Type: TUUID, ID: it.ProductID}
	case ItemSKU:
		return Text(nil, it.SKU)
	case ItemName:
		return Text(nil, it.Name)
	case ItemCategory:
		return Text(nil, it.Category)
	case ItemImageURL:
		return Text(nil, it.ImageURL)
	case ItemQuantity:
		return Value{Type: TInt, Int: int64(it.Quantity)}
	case ItemPrice:
		return Value{Type: TDecimal, Int: it.Price}
	case ItemAddedAt:
		return Value{Type: TTimestamp, Int: it.AddedAt}
	}
	return Value{Null: true}
}
