package design

import (
	"unsafe"

	mongo "github.com/shardbench/shardbench/internal/placement/mongo"
	"github.com/shardbench/shardbench/workloads"
)

// MongoValue converts a shard key value from Access.ShardKey to the placement package's
// BSON value, for hashing and chunk routing. Strings and binary data share v.Bytes (no
// copy): use the result before the buffer given to ShardKey is reused.
func MongoValue(v *workloads.Value) mongo.Value {
	if v.Null {
		return mongo.Null()
	}
	switch v.Type {
	case workloads.TText, workloads.TInet:
		return mongo.String(unsafe.String(unsafe.SliceData(v.Bytes), len(v.Bytes)))
	case workloads.TUUID:
		return mongo.Binary(4, v.ID[:16:16])
	case workloads.TObjectID:
		var id [12]byte
		copy(id[:], v.ID[:12])
		return mongo.ObjectID(id)
	case workloads.TInt:
		return mongo.Int32(int32(v.Int))
	case workloads.TBigInt:
		return mongo.Int64(v.Int)
	case workloads.TTimestamp:
		return mongo.Date(v.Int)
	case workloads.TDate:
		return mongo.Date(v.Int * msDay)
	case workloads.TDecimal:
		return mongo.Decimal(v.Int, 2)
	case workloads.TFloat:
		return mongo.Double(v.Float)
	case workloads.TBool:
		return mongo.Bool(v.Int != 0)
	}
	return mongo.Null()
}
