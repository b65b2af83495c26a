package workloads

import "strconv"

// Field constructors shared by the workloads' vocabularies. Each documents where the
// value comes from.

// IDField is a UUID derived from an integer identity of the op (null when it is -1).
func IDField(name string, kind uint64, doc string, id func(*Op) int64) Field {
	uuidOf := func(m *Model, op *Op) (u [16]byte, ok bool) {
		if x := id(op); x >= 0 {
			return m.UUID(kind, x), true
		}
		return u, false
	}
	return Field{Name: name, Type: TUUID, Doc: doc, Size: 16, Get: func(m *Model) Getter {
		return func(op *Op, _ []byte) Value {
			u, ok := uuidOf(m, op)
			return Value{Type: TUUID, Null: !ok, ID: u}
		}
	}, UUID: func(m *Model) func(op *Op) ([16]byte, bool) {
		return func(op *Op) ([16]byte, bool) { return uuidOf(m, op) }
	}}
}

// UserID is the acting user's UUID (null for a guest).
func UserID(name string) Field {
	return IDField(name, KindUser, "the user's UUID (null for a guest)", func(op *Op) int64 { return op.User })
}

// SessionID is the session's UUID.
func SessionID() Field {
	return IDField("session_id", KindSession, "the session's UUID", func(op *Op) int64 { return op.Session })
}

// ProductID is the product's UUID.
func ProductID(name string) Field {
	return IDField(name, KindProduct, "the product's UUID", func(op *Op) int64 { return op.Product })
}

// OwnerKey is "u:<user uuid>" for a logged-in user, "s:<session uuid>" for a guest (seed
// 001's unified cart owner).
func OwnerKey() Field {
	return Field{Name: "owner_key", Type: TText, Size: 38, Doc: `"u:<user uuid>" for a user, "s:<session uuid>" for a guest`,
		Get: func(m *Model) Getter {
			return func(op *Op, buf []byte) Value {
				var v Value
				v.Type, v.Null = TText, false
				if op.User >= 0 {
					v.Bytes = AppendUUID(append(buf[:0], 'u', ':'), m.UUID(KindUser, op.User))
				} else {
					v.Bytes = AppendUUID(append(buf[:0], 's', ':'), m.UUID(KindSession, op.Session))
				}
				return v
			}
		}}
}

// OwnerID is the owner's UUID: the user's for a logged-in user, else the session's (seed
// 002's "owner (user_id или session_id)").
func OwnerID() Field {
	return Field{Name: "owner_id", Type: TUUID, Size: 16, Doc: "the user's UUID for a logged-in user, else the session's",
		Get: func(m *Model) Getter {
			return func(op *Op, buf []byte) Value {
				var v Value
				v.Type, v.Null = TUUID, false
				if op.User >= 0 {
					v.ID = m.UUID(KindUser, op.User)
				} else {
					v.ID = m.UUID(KindSession, op.Session)
				}
				return v
			}
		}}
}

// TimeField is a timestamp (unix ms) taken from the op.
func TimeField(name, doc string, t func(*Op) int64) Field {
	return Field{Name: name, Type: TTimestamp, Doc: doc, Size: 8, Get: func(*Model) Getter {
		return func(op *Op, buf []byte) Value {
			return Value{Type: TTimestamp, Int: NanosToMillis(t(op))}
		}
	}}
}

// DateField is a date (days since epoch) taken from the op, in the store's zone.
func DateField(name, doc string, t func(*Op) int64) Field {
	return Field{Name: name, Type: TDate, Doc: doc, Size: 4, Get: func(m *Model) Getter {
		off := m.Offset
		return func(op *Op, buf []byte) Value {
			return Value{Type: TDate, Int: FloorDiv(t(op)+off, 86_400_000_000_000)}
		}
	}}
}

// Created is the record's creation time: Op.Ref.
func Created(name string) Field {
	return TimeField(name, "when the record was created (Op.Ref)", func(op *Op) int64 { return op.Ref })
}

// Now is the operation's store time: Op.Time.
func Now(name, doc string) Field {
	return TimeField(name, doc, func(op *Op) int64 { return op.Time })
}

// ConstText is a text field computed from the op without allocation.
func ConstText(name, doc string, size int32, s func(m *Model, op *Op) string) Field {
	return Field{Name: name, Type: TText, Doc: doc, Size: size, Get: func(m *Model) Getter {
		return func(op *Op, buf []byte) Value {
			var v Value
			v = Text(buf, s(m, op))
			return v
		}
	}}
}

// AppendText is a text field appended from the op.
func AppendText(name, doc string, size int32, app func(m *Model, dst []byte, op *Op) []byte) Field {
	return Field{Name: name, Type: TText, Doc: doc, Size: size, Get: func(m *Model) Getter {
		return func(op *Op, buf []byte) Value {
			var v Value
			v.Type, v.Null = TText, false
			v.Bytes = app(m, buf[:0], op)
			return v
		}
	}}
}

// IntField is an integer (CQL int) from the op.
func IntField(name, doc string, f func(*Op) int64) Field {
	return Field{Name: name, Type: TInt, Doc: doc, Size: 4, Get: func(*Model) Getter {
		return func(op *Op, buf []byte) Value {
			var v Value
			v.Type, v.Null, v.Int = TInt, false, f(op)
			return v
		}
	}}
}

// DecimalField is a money amount in minor units from the op.
func DecimalField(name, doc string, f func(*Op) int64) Field {
	return Field{Name: name, Type: TDecimal, Doc: doc, Size: 8, Get: func(*Model) Getter {
		return func(op *Op, buf []byte) Value {
			var v Value
			v.Type, v.Null, v.Int = TDecimal, false, f(op)
			return v
		}
	}}
}

// GeoZone is the operation's geo zone name.
func GeoZone() Field {
	return ConstText("geo_zone", "geo zone name (moscow, spb, ...): Op.Zone", 8, func(m *Model, op *Op) string { return m.Zones[op.Zone] })
}

// CategoryName is the category name of Op.Category.
func CategoryName() Field {
	return ConstText("category", "category name (electronics, ...): Op.Category", 10, func(m *Model, op *Op) string {
		if op.Category == NoCategory {
			return ""
		}
		return m.Categories[op.Category].Name
	})
}

// CategoryID is a UUID for the category (seed 004's category_id).
func CategoryID() Field {
	return IDField("category_id", KindCategory, "the category's UUID (seed 004 keys categories by UUID)", func(op *Op) int64 {
		if op.Category == NoCategory {
			return -1
		}
		return int64(op.Category)
	})
}

// Subcategory is the subcategory name of Op.Sub within Op.Category.
func Subcategory() Field {
	return ConstText("subcategory", "subcategory name (smartphones, laptops, ...): Op.Sub", 12, func(m *Model, op *Op) string {
		if op.Category == NoCategory || op.Sub == NoSub {
			return ""
		}
		return m.Categories[op.Category].Subs[op.Sub]
	})
}

// Brand is the brand of Op.Product.
func Brand() Field {
	return ConstText("brand", "the product's brand (Apple, Samsung, ...)", 8, func(m *Model, op *Op) string {
		return m.ProductBrand(op.Product, m.CategoryOf(op.Product))
	})
}

// ProductName is the display name of Op.Product.
func ProductName(name string) Field {
	return AppendText(name, "the product's display name", 28, func(m *Model, dst []byte, op *Op) []byte {
		return m.AppendProductName(dst, op.Product, m.CategoryOf(op.Product))
	})
}

// SKU is the product's SKU string (seed 001's MongoDB product _id).
func SKU(name string) Field {
	return AppendText(name, `the product's SKU, e.g. "PROD-ELE-0000004093" (seed 001 uses it as products._id)`, 18, func(m *Model, dst []byte, op *Op) []byte {
		return m.AppendSKU(dst, op.Product, m.CategoryOf(op.Product))
	})
}

// ImageURL is the product's image URL.
func ImageURL(name string) Field {
	return AppendText(name, "the product's image URL", 48, func(m *Model, dst []byte, op *Op) []byte {
		dst = append(dst, "https://cdn.mobilnymir.example/p/"...)
		dst = strconv.AppendInt(dst, op.Product, 10)
		return append(dst, ".jpg"...)
	})
}

// DeviceType is the session's device type.
func DeviceType() Field {
	return ConstText("device_type", "mobile | desktop | tablet", 7, func(m *Model, op *Op) string {
		return DeviceTypes[m.SessionDevice(op.Session)]
	})
}

// SessionData lists a session's attributes (key, value) in order; AppendSessionData
// writes the same as a JSON object without allocating.
func (m *Model) SessionData(op *Op) [][2]string {
	return [][2]string{
		{"locale", "ru-RU"},
		{"currency", "RUB"},
		{"geo_zone", m.Zones[op.Zone]},
		{"device", DeviceTypes[m.SessionDevice(op.Session)]},
		{"last_page", "/catalog/" + strconv.FormatInt(int64(op.Seq%997), 10)},
	}
}

// AppendSessionData appends the session's attributes as one JSON object (seed 004 keeps
// session_data as a JSON text blob).
func (m *Model) AppendSessionData(dst []byte, op *Op) []byte {
	dst = append(dst, `{"locale":"ru-RU","currency":"RUB","geo_zone":"`...)
	dst = append(dst, m.Zones[op.Zone]...)
	dst = append(dst, `","device":"`...)
	dst = append(dst, DeviceTypes[m.SessionDevice(op.Session)]...)
	dst = append(dst, `","last_page":"/catalog/`...)
	dst = strconv.AppendInt(dst, int64(op.Seq%997), 10)
	return append(dst, `"}`...)
}
