package mongo

import (
	"context"
	"errors"
	"strings"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/shardbench/shardbench/internal/metrics"
)

// Server error codes (src/mongo/base/error_codes.yml) grouped by the harness's classes.
var (
	timeoutCodes     = []int{50, 89, 202, 262, 64} // MaxTimeMSExpired, NetworkTimeout, NetworkInterfaceExceededTimeLimit, ExceededTimeLimit, WriteConcernFailed (wtimeout)
	unavailableCodes = []int{
		10107, 13435, 13436, 189, 91, 11600, 11602, // not primary, stepped down, shutting down
		133, 100, 70, 6, 7, // FailedToSatisfyReadPreference, UnsatisfiableWriteConcern, ShardNotFound, HostUnreachable, HostNotFound
	}
	overloadedCodes   = []int{462, 146}                               // IngressRequestRateLimitExceeded, ExceededMemoryLimit
	conflictCodes     = []int{11000, 11001, 12582, 112, 251, 256, 24} // duplicate key, WriteConflict, NoSuchTransaction, TransactionCommitted, LockTimeout
	notSupportedCodes = []int{59, 238, 115, 27}                       // CommandNotFound, NotImplemented, CommandNotSupported, IndexNotFound (hashed/text on FerretDB)
	// BadValue, FailedToParse, TypeMismatch, DocumentValidationFailure, InvalidOptions,
	// ConflictingUpdateOperators, DollarPrefixedFieldName, Location16755
	clientCodes = []int{2, 9, 14, 121, 72, 40, 52, 16755}
)

// Classify maps a driver error to the harness's error classes. ctxErr is the operation
// context's error, which tells a timeout from an interrupt when the driver wraps it.
func Classify(err error, ctxErr error) metrics.Class {
	if err == nil {
		return metrics.OK
	}
	switch {
	case errors.Is(ctxErr, context.Canceled) || errors.Is(err, context.Canceled):
		return metrics.Canceled
	case ctxErr == nil && strings.Contains(err.Error(), "server selection"):
		// No server answered within serverSelectionTimeout while the operation still had
		// time: the server is down or unreachable.
		return metrics.Connection
	case mongo.IsTimeout(err) || errors.Is(ctxErr, context.DeadlineExceeded):
		// Before the network check: a read that times out is also labelled NetworkError.
		return metrics.Timeout
	case mongo.IsNetworkError(err):
		return metrics.Connection
	}
	var se mongo.ServerError
	if errors.As(err, &se) {
		for _, g := range []struct {
			codes []int
			class metrics.Class
		}{
			{timeoutCodes, metrics.Timeout}, {unavailableCodes, metrics.Unavailable},
			{overloadedCodes, metrics.Overloaded}, {conflictCodes, metrics.Conflict},
			{notSupportedCodes, metrics.NotSupported}, {clientCodes, metrics.Client},
		} {
			for _, c := range g.codes {
				if se.HasErrorCode(c) {
					return g.class
				}
			}
		}
		if se.HasErrorLabel("RetryableWriteError") || se.HasErrorLabel("TransientTransactionError") {
			return metrics.Unavailable
		}
		return metrics.Server
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "server selection"):
		// No server answered within serverSelectionTimeout: down or unreachable.
		return metrics.Connection
	case strings.Contains(msg, "connection refused"), strings.Contains(msg, "connection reset"),
		strings.Contains(msg, "broken pipe"), strings.Contains(msg, "EOF"),
		strings.Contains(msg, "connection(") && strings.Contains(msg, "closed"):
		return metrics.Connection
	case errors.Is(err, mongo.ErrClientDisconnected):
		return metrics.Canceled
	}
	return metrics.Client
}
