package cassandra

import (
	"context"
	"errors"
	"net"
	"strings"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/shardbench/shardbench/internal/metrics"
)

// Classify maps a driver error to the harness's error classes. ctxErr is the operation
// context's error, which tells a timeout from an interrupt when the driver wraps it.
//
// The server's own answers come first (they carry the reason); then the driver's and the
// network's. A write timeout of a Paxos round (write type CAS) is a timeout like any
// other: Cassandra cannot say whether contention or a slow replica caused it; a
// CAS_WRITE_UNKNOWN (the outcome of a contended LWT is unknown) is a conflict.
func Classify(err error, ctxErr error) metrics.Class {
	if err == nil {
		return metrics.OK
	}
	if errors.Is(ctxErr, context.Canceled) || errors.Is(err, context.Canceled) {
		return metrics.Canceled
	}
	var (
		unavail  *gocql.RequestErrUnavailable
		wto      *gocql.RequestErrWriteTimeout
		rto      *gocql.RequestErrReadTimeout
		over     *gocql.RequestErrOverloaded
		boot     *gocql.RequestErrBootstrapping
		casUnk   *gocql.RequestErrCASWriteUnknown
		rf       *gocql.RequestErrReadFailure
		wf       *gocql.RequestErrWriteFailure
		reqErr   gocql.RequestError
		netError net.Error
	)
	switch {
	case errors.As(err, &unavail):
		return metrics.Unavailable
	case errors.As(err, &wto), errors.As(err, &rto):
		return metrics.Timeout
	case errors.As(err, &over):
		return metrics.Overloaded
	case errors.As(err, &boot):
		return metrics.Unavailable
	case errors.As(err, &casUnk):
		return metrics.Conflict
	case errors.As(err, &rf), errors.As(err, &wf):
		return metrics.Server
	case errors.As(err, &reqErr):
		switch reqErr.Code() {
		case gocql.ErrCodeSyntax, gocql.ErrCodeInvalid, gocql.ErrCodeConfig, gocql.ErrCodeAlreadyExists,
			gocql.ErrCodeUnauthorized, gocql.ErrCodeCredentials, gocql.ErrCodeProtocol:
			return metrics.Client
		case gocql.ErrCodeTruncate:
			return metrics.Timeout
		}
		return metrics.Server
	case errors.Is(err, gocql.ErrTimeoutNoResponse), errors.Is(ctxErr, context.DeadlineExceeded),
		errors.Is(err, context.DeadlineExceeded):
		return metrics.Timeout
	case errors.Is(err, gocql.ErrNoConnections), errors.Is(err, gocql.ErrConnectionClosed),
		errors.Is(err, gocql.ErrNoStreams), errors.Is(err, gocql.ErrTooManyTimeouts),
		errors.Is(err, gocql.ErrSessionClosed), errors.Is(err, gocql.ErrUnavailable):
		return metrics.Connection
	case errors.As(err, &netError):
		if netError.Timeout() {
			return metrics.Timeout
		}
		return metrics.Connection
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "connection refused"), strings.Contains(msg, "connection reset"),
		strings.Contains(msg, "broken pipe"), strings.Contains(msg, "EOF"):
		return metrics.Connection
	case strings.Contains(msg, "can not marshal"), strings.Contains(msg, "cannot marshal"):
		return metrics.Client
	}
	return metrics.Client
}
