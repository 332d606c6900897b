// Package luagenotel reports luagen script calls to OpenTelemetry: one span
// and a set of metrics per call, as go-redis's redisotel and rueidis's
// rueidisotel do for commands, but naming the script, its .lua file, the
// command that answered, the retries and the fallbacks. It implements
// [runtime.Hook]; attach it where the executor is built:
//
//	h, err := luagenotel.NewHook() // the global TracerProvider and MeterProvider
//	if err != nil { ... }
//	s := stock.New(runtime.NewRueidisExecutor(client, runtime.WithHook(h)))
//	// go-redis: stock.New(goredis.NewExecutor(rdb, runtime.WithHook(h)))
//	// lock:     lock.NewClient(client, lock.WithExecutor(runtime.NewRueidisExecutor(client, runtime.WithHook(h))),
//	//                          lock.WithHook(h.LockEvents()))
//
// The span of a call is the parent of the client's own span (rueidisotel's
// or redisotel's EVALSHA), so a trace reads "EVALSHA stock.Deduct" with the
// wire command under it. A program that does not import this package
// compiles no OpenTelemetry: package runtime depends on nothing for its
// hook.
//
// # Spans
//
// One CLIENT span per call (per call of a [runtime.Batch] too), following
// OpenTelemetry's semantic conventions for Redis client spans:
//
//   - name: db.query.summary, "<command> <script>", e.g. "EVALSHA
//     stock.Deduct" ("EVAL stock.Deduct" after NOSCRIPT, "FCALL ..." for a
//     function library's script);
//   - db.system.name "redis"; db.operation.name the command that
//     answered (EVALSHA, EVAL, FCALL or their _RO forms);
//     db.stored_procedure.name the function for FCALL; server.address and
//     server.port when the executor talks to one server;
//   - error.type and db.response.status_code when the call failed (see
//     below);
//   - luagen.script ("stock.Deduct"), luagen.script.file
//     ("lua/stock/deduct.lua"), luagen.outcome (ok, declared, script_error,
//     server_error, transport, refused), luagen.attempts, and, when they
//     happened, luagen.noscript (EVALs after NOSCRIPT),
//     luagen.library.loads, luagen.function_fallback, luagen.merged.size
//     (the [runtime.Coalescer] run that carried the call),
//     luagen.batch.size (the calls sent with it in one batch) and
//     luagen.error.name (a declared error's name, e.g. "OutOfStock").
//
// A declared error (---@error, a *[runtime.CodeError] such as
// stock.ErrOutOfStock) is an answer the script gave, not a failure of the
// call: its span keeps status Unset and has no error.type, as a 404 on an
// HTTP server span; luagen.outcome "declared" and luagen.error.name say
// which. Every other error sets status Error with the error's text and
// error.type: the reply's code for a server error reply (BUSY, NOPERM;
// also db.response.status_code) and for an error raised in the script
// (WRONGTYPE, OOM, ...; "script_error" for a Lua runtime error and for a
// reply without a code word, as rueidis strips "ERR "), "timeout" and "canceled" for the context,
// "client_closed", "cross_slot", or the Go type of any other error
// ("*net.OpError").
//
// # Metrics
//
//   - db.client.operation.duration (histogram, s; the conventions' buckets
//     0.001 … 10): every call, retries and backoff included, with
//     db.system.name, db.operation.name, db.query.summary, luagen.script,
//     luagen.outcome, error.type, server.address, server.port;
//   - luagen.script.calls (counter): every call, with luagen.script,
//     db.operation.name, luagen.outcome, error.type and luagen.error.name:
//     calls and errors by kind;
//   - luagen.script.retries (counter): tries after the first, per script;
//   - luagen.script.fallbacks (counter): with luagen.fallback "noscript"
//     (EVAL after NOSCRIPT), "library_load" (a function library loaded
//     after "Function not found") or "function_to_eval" (a library's
//     script ran with EVALSHA/EVAL);
//   - luagen.script.merged.size (histogram, {call}): per call through a
//     Coalescer, the size of the run that carried it;
//   - luagen.script.batch.size (histogram, {call}): per batch call, the
//     calls sent with it;
//   - the lock's metrics, fed by [Hook.LockEvents].
//
// Attribute sets are built once per script, command and outcome and
// reused, so a call records its metrics without building them again.
package luagenotel

import (
	"context"
	"errors"
	"net"
	"reflect"
	"strconv"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/luagen/luagen/runtime"
)

// ScopeName is the instrumentation scope of the tracer and meter.
const ScopeName = "github.com/luagen/luagen/luagenotel"

// Attribute keys of luagen's own attributes (see the package
// documentation).
const (
	AttrScript           = attribute.Key("luagen.script")
	AttrScriptFile       = attribute.Key("luagen.script.file")
	AttrOutcome          = attribute.Key("luagen.outcome")
	AttrAttempts         = attribute.Key("luagen.attempts")
	AttrNoScript         = attribute.Key("luagen.noscript")
	AttrLibraryLoads     = attribute.Key("luagen.library.loads")
	AttrFunctionFallback = attribute.Key("luagen.function_fallback")
	AttrMergedSize       = attribute.Key("luagen.merged.size")
	AttrBatchSize        = attribute.Key("luagen.batch.size")
	AttrErrorName        = attribute.Key("luagen.error.name")
	AttrFallback         = attribute.Key("luagen.fallback")
)

// durationBuckets are the explicit bucket boundaries the semantic
// conventions give db.client.operation.duration, in seconds.
var durationBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10}

// sizeBuckets cover merged runs (up to a script's ---@coalesce, at most a
// few hundred) and batches.
var sizeBuckets = []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 1024}

// Option configures [NewHook].
type Option func(*config)

type config struct {
	tp trace.TracerProvider
	mp metric.MeterProvider
}

// WithTracerProvider sets the TracerProvider spans are created with
// (default: otel.GetTracerProvider() at NewHook). A nil tp keeps the
// default.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) {
		if tp != nil {
			c.tp = tp
		}
	}
}

// WithMeterProvider sets the MeterProvider metrics are recorded with
// (default: otel.GetMeterProvider() at NewHook). A nil mp keeps the
// default.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) {
		if mp != nil {
			c.mp = mp
		}
	}
}

// Hook is a [runtime.Hook] that records spans and metrics; create it with
// [NewHook]. It is safe for concurrent use; one Hook may serve several
// executors.
type Hook struct {
	tracer    trace.Tracer
	duration  metric.Float64Histogram
	calls     metric.Int64Counter
	retries   metric.Int64Counter
	fallbacks metric.Int64Counter
	merged    metric.Int64Histogram
	batch     metric.Int64Histogram
	lock      lockInstruments

	sets sync.Map // setKey → attribute.Set
}

var _ runtime.Hook = (*Hook)(nil)

// NewHook returns a Hook recording to the providers of opts. It fails only
// when the MeterProvider refuses to create an instrument.
func NewHook(opts ...Option) (*Hook, error) {
	c := config{tp: otel.GetTracerProvider(), mp: otel.GetMeterProvider()}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	h := &Hook{tracer: c.tp.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL))}
	m := c.mp.Meter(ScopeName, metric.WithSchemaURL(semconv.SchemaURL))
	var errs [7]error
	h.duration, errs[0] = m.Float64Histogram("db.client.operation.duration",
		metric.WithDescription("Duration of database client operations: one luagen script call, retries included."),
		metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(durationBuckets...))
	h.calls, errs[1] = m.Int64Counter("luagen.script.calls",
		metric.WithDescription("Script calls, by script, command and outcome."), metric.WithUnit("{call}"))
	h.retries, errs[2] = m.Int64Counter("luagen.script.retries",
		metric.WithDescription("Tries after the first of idempotent scripts, after transient failures."), metric.WithUnit("{retry}"))
	h.fallbacks, errs[3] = m.Int64Counter("luagen.script.fallbacks",
		metric.WithDescription("EVALs after NOSCRIPT, function library loads, and library scripts run with EVALSHA/EVAL."), metric.WithUnit("{fallback}"))
	h.merged, errs[4] = m.Int64Histogram("luagen.script.merged.size",
		metric.WithDescription("Per call through a Coalescer: the calls of the server-side run that carried it."),
		metric.WithUnit("{call}"), metric.WithExplicitBucketBoundaries(sizeBuckets...))
	h.batch, errs[5] = m.Int64Histogram("luagen.script.batch.size",
		metric.WithDescription("Per batch call: the calls sent with it in one batch."),
		metric.WithUnit("{call}"), metric.WithExplicitBucketBoundaries(sizeBuckets...))
	errs[6] = h.lock.init(m)
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	return h, nil
}

// CallStart implements [runtime.Hook]: it starts the call's span, a child
// of the span in ctx, and returns ctx with it.
func (h *Hook) CallStart(ctx context.Context, c runtime.CallStart) context.Context {
	s := c.Script
	mode := runtime.ModeEvalSha
	if s.Library() != nil {
		mode = runtime.ModeFCall // corrected at CallEnd when not
	}
	attrs := [...]attribute.KeyValue{
		semconv.DBSystemNameRedis,
		AttrScript.String(s.Name()),
		AttrScriptFile.String(s.File()),
	}
	ctx, _ = h.tracer.Start(ctx, mode.Command(s.ReadOnly())+" "+s.Name(),
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs[:]...))
	return ctx
}

// CallEnd implements [runtime.Hook]: it ends the call's span with its
// outcome and records the metrics.
func (h *Hook) CallEnd(ctx context.Context, c runtime.CallEnd) {
	s := c.Script
	op := c.Mode.Command(s.ReadOnly())
	errType, status := errorType(c)
	errName := ""
	if ce, ok := errors.AsType[*runtime.CodeError](c.Err); ok {
		errName = ce.Name()
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		h.endSpan(span, c, op, errType, status, errName)
	}

	set := h.set(setKey{script: s, op: op, outcome: c.Outcome, errType: errType, errName: errName, server: c.Server})
	attrs := metric.WithAttributeSet(set)
	h.duration.Record(ctx, c.Duration.Seconds(), attrs)
	h.calls.Add(ctx, 1, attrs)
	if c.Attempts > 1 || c.NoScripts > 0 || c.LibraryLoads > 0 || c.FunctionFallback || c.Merged > 0 || c.Batch > 0 {
		h.recordExtras(ctx, c)
	}
}

// endSpan sets the outcome's attributes and status on span and ends it.
func (h *Hook) endSpan(span trace.Span, c runtime.CallEnd, op, errType, status, errName string) {
	s := c.Script
	span.SetName(op + " " + s.Name())
	attrs := make([]attribute.KeyValue, 0, 16)
	attrs = append(attrs,
		semconv.DBOperationName(op),
		semconv.DBQuerySummary(op+" "+s.Name()),
		AttrOutcome.String(c.Outcome.String()),
		AttrAttempts.Int(c.Attempts),
	)
	if c.Mode == runtime.ModeFCall {
		attrs = append(attrs, semconv.DBStoredProcedureName(s.FunctionName()))
	}
	if host, port, ok := splitServer(c.Server); ok {
		attrs = append(attrs, semconv.ServerAddress(host), semconv.ServerPort(port))
	}
	if c.NoScripts > 0 {
		attrs = append(attrs, AttrNoScript.Int(c.NoScripts))
	}
	if c.LibraryLoads > 0 {
		attrs = append(attrs, AttrLibraryLoads.Int(c.LibraryLoads))
	}
	if c.FunctionFallback {
		attrs = append(attrs, AttrFunctionFallback.Bool(true))
	}
	if c.Merged > 0 {
		attrs = append(attrs, AttrMergedSize.Int(c.Merged))
	}
	if c.Batch > 0 {
		attrs = append(attrs, AttrBatchSize.Int(c.Batch))
	}
	if errName != "" {
		attrs = append(attrs, AttrErrorName.String(errName))
	}
	if errType != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
		if status != "" {
			attrs = append(attrs, semconv.DBResponseStatusCode(status))
		}
		span.SetStatus(codes.Error, c.Err.Error())
	}
	span.SetAttributes(attrs...)
	span.End()
}

// recordExtras records the retry, fallback, merged-run and batch metrics
// of a call that had any.
func (h *Hook) recordExtras(ctx context.Context, c runtime.CallEnd) {
	script := metric.WithAttributeSet(h.set(setKey{script: c.Script, kind: setScript}))
	if c.Attempts > 1 {
		h.retries.Add(ctx, int64(c.Attempts-1), script)
	}
	if c.NoScripts > 0 {
		h.fallbacks.Add(ctx, int64(c.NoScripts), metric.WithAttributeSet(h.set(setKey{script: c.Script, kind: setFallback, fallback: "noscript"})))
	}
	if c.LibraryLoads > 0 {
		h.fallbacks.Add(ctx, int64(c.LibraryLoads), metric.WithAttributeSet(h.set(setKey{script: c.Script, kind: setFallback, fallback: "library_load"})))
	}
	if c.FunctionFallback {
		h.fallbacks.Add(ctx, 1, metric.WithAttributeSet(h.set(setKey{script: c.Script, kind: setFallback, fallback: "function_to_eval"})))
	}
	if c.Merged > 0 {
		h.merged.Record(ctx, int64(c.Merged), script)
	}
	if c.Batch > 0 {
		h.batch.Record(ctx, int64(c.Batch), script)
	}
}

// errorType returns the error.type of a failed call ("" for a success and
// for a declared error, which is an answer) and the Redis error code for
// db.response.status_code ("" when there was no error reply).
func errorType(c runtime.CallEnd) (errType, status string) {
	switch c.Outcome {
	case runtime.OutcomeOK, runtime.OutcomeDeclared:
		return "", ""
	case runtime.OutcomeRefused:
		return "cross_slot", ""
	case runtime.OutcomeScriptError, runtime.OutcomeServerError:
		if re, ok := errors.AsType[*runtime.ReplyError](c.Err); ok && isCode(re.Code()) {
			return re.Code(), re.Code()
		}
		if c.Outcome == runtime.OutcomeScriptError {
			// A Lua runtime error ("user_script:14: attempt to ..."):
			// no code word, and the line would split the series.
			return "script_error", ""
		}
		return reflect.TypeOf(c.Err).String(), ""
	}
	switch {
	case errors.Is(c.Err, context.DeadlineExceeded):
		return "timeout", ""
	case errors.Is(c.Err, context.Canceled):
		return "canceled", ""
	case errors.Is(c.Err, runtime.ErrClientClosed):
		return "client_closed", ""
	}
	return reflect.TypeOf(c.Err).String(), ""
}

// isCode reports whether s reads as a Redis error code: upper-case
// letters, digits and underscores (ERR, WRONGTYPE, OUT_OF_STOCK).
func isCode(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return s != ""
}

// splitServer splits "host:port".
func splitServer(addr string) (host string, port int, ok bool) {
	if addr == "" {
		return "", 0, false
	}
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, false
	}
	port, err = strconv.Atoi(p)
	return host, port, err == nil
}

// setKind says which attributes a cached set holds.
type setKind uint8

const (
	setCall     setKind = iota // a call's: duration and calls
	setScript                  // the script alone: retries, merged, batch
	setFallback                // the script and the fallback's kind
)

// setKey identifies a cached attribute set.
type setKey struct {
	kind     setKind
	script   *runtime.Script
	op       string
	outcome  runtime.Outcome
	errType  string
	errName  string
	server   string
	fallback string
}

// set returns the attribute set of k, built on first use.
func (h *Hook) set(k setKey) attribute.Set {
	if s, ok := h.sets.Load(k); ok {
		return s.(attribute.Set)
	}
	var kvs []attribute.KeyValue
	switch k.kind {
	case setCall:
		kvs = append(kvs,
			semconv.DBSystemNameRedis,
			semconv.DBOperationName(k.op),
			semconv.DBQuerySummary(k.op+" "+k.script.Name()),
			AttrScript.String(k.script.Name()),
			AttrOutcome.String(k.outcome.String()),
		)
		if k.errType != "" {
			kvs = append(kvs, semconv.ErrorTypeKey.String(k.errType))
		}
		if k.errName != "" {
			kvs = append(kvs, AttrErrorName.String(k.errName))
		}
		if host, port, ok := splitServer(k.server); ok {
			kvs = append(kvs, semconv.ServerAddress(host), semconv.ServerPort(port))
		}
	case setScript:
		kvs = append(kvs, semconv.DBSystemNameRedis, AttrScript.String(k.script.Name()))
	case setFallback:
		kvs = append(kvs, semconv.DBSystemNameRedis, AttrScript.String(k.script.Name()), AttrFallback.String(k.fallback))
	}
	s, _ := h.sets.LoadOrStore(k, attribute.NewSet(kvs...))
	return s.(attribute.Set)
}
