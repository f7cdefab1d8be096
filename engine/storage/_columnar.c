/* engine.storage._columnar: the C fast paths of v2 record batches.
 *
 * Five functions, each the fast path of a Python function with identical output (read those
 * first: they own the Python API and the pure-Python fallback used when this is not built):
 *
 *   decode(data, first_offset, end_offset, crc32c, decompress) ->
 *       (count, key, value, offsets, timestamps, timestamp_types, headers)
 *     Arrow column buffers, wrapped by engine/storage/columnar.py (decode_columns);
 *   decode_objects(data, first_offset, end_offset, crc32c, decompress, control, cls, fields,
 *                  header_factory) -> list
 *     one Python object per record, for engine/storage/batch_records.py (decode_records);
 *   encode_records(records, base_timestamp) -> (record array bytes, max_timestamp) or None
 *     the record array of an uncompressed batch, for record_batch.encode_batch (None: a record
 *     this does not handle, such as one with headers; the caller then encodes in Python).
 *   records_fill(data, count, check_keys) -> bool
 *     the leader's walk over an appended batch's records (engine/storage/log_validator.py):
 *     True exactly when its Python walk passes; on False the caller walks in Python for the
 *     error.
 *   leader_batch_ok(data, max_message_bytes, check_keys, crc32c) -> bool
 *     a leader's append of one uncompressed batch, every check of log_validator's two passes
 *     in one call: True exactly when they pass; on False the caller runs them in Python.
 * and one that is not about bytes:
 *   untrack_atomic(obj) -> bool
 *     leaves an object whose __slots__ hold only atomic values out of the cyclic GC (a producer's
 *     pending records, engine/clients/producer.py); without it they stay tracked, nothing else
 *     changes.
 *
 * The byte layout is the one documented in record_batch.py; the constants below mirror it.
 *
 * decode's buffers:
 * key, value       (offsets int32[count+1], data, validity bitmap, null_count): Arrow binary
 * offsets          int64[count]: absolute record offsets
 * timestamps       int64[count]: milliseconds (maxTimestamp for every record of a
 *                  LogAppendTime batch)
 * timestamp_types  int32[count]: 0 CreateTime, 1 LogAppendTime
 * headers          (list offsets int32[count+1], list validity, list null_count, header count,
 *                  header keys (offsets, data, validity, 0), header values (offsets, data,
 *                  validity, null_count)); a record without headers has a null list
 * Every buffer is a bytearray, so Arrow wraps it without a copy.
 *
 * Both decoders keep only records with first_offset <= offset < end_offset (a fetch returns
 * whole batches, so the first and last may straddle the range). decode skips control batches
 * (transaction markers), as Kafka's consumer never hands control records to the application;
 * decode_objects decodes them and keeps or drops their records as `control` says.
 * crc32c is called per batch on attributes..end unless it is None; decompress(codec, bytes,
 * position) -> bytes handles compressed batches in Python (the records inside are then
 * decoded here).
 *
 * Safety: data comes off the network. Every length is checked against the end of its buffer
 * before anything is read; ill-formed input raises record_batch.CorruptRecordError with the
 * same acceptance rules as record_batch.decode_batch (and, as columnar.py's fallback, a record
 * offset or timestamp beyond int64 is refused).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>   /* T_OBJECT_EX, READONLY: the __slots__ members decode_objects fills */
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Batch header layout (record_batch.py: HEADER_STRUCT and the *_OFFSET constants). */
#define BATCH_LENGTH_OFFSET 8
#define PARTITION_LEADER_EPOCH_OFFSET 12
#define MAGIC_OFFSET 16
#define CRC_OFFSET 17
#define ATTRIBUTES_OFFSET 21
#define LAST_OFFSET_DELTA_OFFSET 23
#define BASE_TIMESTAMP_OFFSET 27
#define MAX_TIMESTAMP_OFFSET 35
#define RECORDS_COUNT_OFFSET 57
#define RECORDS_OFFSET 61
#define LOG_OVERHEAD 12
#define RECORD_BATCH_OVERHEAD 61
#define MIN_BATCH_LENGTH (RECORD_BATCH_OVERHEAD - LOG_OVERHEAD)
#define MAGIC 2

#define COMPRESSION_CODEC_MASK 0x07
#define TIMESTAMP_TYPE_MASK 0x08
#define CONTROL_FLAG_MASK 0x20
#define CREATE_TIME 0
#define LOG_APPEND_TIME 1
#define NULL_LENGTH (-1)

#define CONTINUATION_BIT 0x80
#define PAYLOAD_MASK 0x7F
#define PAYLOAD_BITS 7
#define MAX_VARINT_BYTES 5
#define MAX_VARLONG_BYTES 10

/* The per-record helpers are forced inline: called at several sites, gcc would otherwise
 * keep them as calls, and the call overhead is a third of the per-record cost. */
#if defined(__GNUC__) || defined(__clang__)
#define HOT static inline __attribute__((always_inline))
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define HOT static inline
#define UNLIKELY(x) (x)
#endif

/* engine.storage.record_batch.CorruptRecordError, looked up at the first error: record_batch
 * imports this module (for encode_records), so it cannot be imported at this module's init. */
static PyObject *CorruptRecordError;

static PyObject *
corrupt_record_error(void)
{
    if (CorruptRecordError == NULL) {
        PyObject *record_batch = PyImport_ImportModule("engine.storage.record_batch");
        if (record_batch == NULL)
            return NULL;
        CorruptRecordError = PyObject_GetAttrString(record_batch, "CorruptRecordError");
        Py_DECREF(record_batch);
    }
    return CorruptRecordError;
}

/* Raise CorruptRecordError("batch at position P: ...", P). Returns -1 for `return corrupt(...)`. */
static int
corrupt(Py_ssize_t position, const char *format, ...)
{
    char detail[256];
    va_list args;
    va_start(args, format);
    vsnprintf(detail, sizeof detail, format, args);
    va_end(args);
    PyObject *error_class = corrupt_record_error();
    if (error_class == NULL)
        return -1;
    PyObject *error = PyObject_CallFunction(error_class, "Nn",
        PyUnicode_FromFormat("batch at position %zd: %s", position, detail), position);
    if (error != NULL) {
        PyErr_SetObject(error_class, error);
        Py_DECREF(error);
    }
    return -1;
}

/* -- growable buffers (bytearrays) ------------------------------------------------------- */

typedef struct {
    PyObject *array;   /* a bytearray, resized as we go and trimmed to `length` at the end */
    char *bytes;
    Py_ssize_t length;
    Py_ssize_t capacity;
} Buffer;

static int
buffer_init(Buffer *b, Py_ssize_t capacity)
{
    b->array = PyByteArray_FromStringAndSize(NULL, capacity);
    if (b->array == NULL)
        return -1;
    b->bytes = PyByteArray_AS_STRING(b->array);
    b->length = 0;
    b->capacity = capacity;
    return 0;
}

static int buffer_grow(Buffer *b, Py_ssize_t extra);

/* Room for `extra` more bytes: doubling keeps appends amortised O(1). */
HOT int
buffer_reserve(Buffer *b, Py_ssize_t extra)
{
    if (b->length + extra <= b->capacity)
        return 0;
    return buffer_grow(b, extra);
}

static int
buffer_grow(Buffer *b, Py_ssize_t extra)
{
    Py_ssize_t capacity = b->capacity * 2;
    if (capacity < b->length + extra)
        capacity = b->length + extra;
    if (PyByteArray_Resize(b->array, capacity) < 0)
        return -1;
    b->bytes = PyByteArray_AS_STRING(b->array);
    b->capacity = capacity;
    return 0;
}

HOT int
buffer_append(Buffer *b, const void *data, Py_ssize_t size)
{
    if (buffer_reserve(b, size) < 0)
        return -1;
    memcpy(b->bytes + b->length, data, (size_t)size);
    b->length += size;
    return 0;
}

/* The finished bytearray (a new reference); the Buffer no longer owns it. */
static PyObject *
buffer_finish(Buffer *b)
{
    if (PyByteArray_Resize(b->array, b->length) < 0)
        return NULL;
    PyObject *array = b->array;
    b->array = NULL;
    return array;
}

/* -- Arrow columns --------------------------------------------------------------------- */

/* A variable-size binary column: int32 offsets, data and (if nullable) a validity bitmap. */
typedef struct {
    Buffer offsets;
    Buffer data;
    Buffer validity;
    Py_ssize_t length;
    Py_ssize_t null_count;
} BinaryColumn;

static int
binary_init(BinaryColumn *c, Py_ssize_t rows, Py_ssize_t data_bytes)
{
    int32_t zero = 0;
    c->length = c->null_count = 0;
    if (buffer_init(&c->offsets, (rows + 1) * 4) < 0 || buffer_init(&c->data, data_bytes) < 0
            || buffer_init(&c->validity, rows / 8 + 1) < 0)
        return -1;
    return buffer_append(&c->offsets, &zero, 4);
}

/* Append the validity bit of item `length` to an Arrow bitmap (least significant bit first). */
HOT int
bitmap_append(Buffer *bitmap, Py_ssize_t length, int valid)
{
    if (length % 8 == 0) {
        uint8_t none = 0;
        if (buffer_append(bitmap, &none, 1) < 0)
            return -1;
    }
    if (valid)
        bitmap->bytes[bitmap->length - 1] |= (uint8_t)(1 << (length % 8));
    return 0;
}

/* Append one value; size NULL_LENGTH appends a null. */
HOT int
binary_append(BinaryColumn *c, const uint8_t *value, int32_t size, Py_ssize_t position)
{
    if (bitmap_append(&c->validity, c->length, size != NULL_LENGTH) < 0)
        return -1;
    if (size == NULL_LENGTH) {
        c->null_count++;
        size = 0;
    } else if (buffer_append(&c->data, value, size) < 0) {
        return -1;
    }
    /* Arrow's binary type has int32 offsets: one array holds at most 2 GiB. */
    if (UNLIKELY(c->data.length > INT32_MAX))
        return corrupt(position, "more than 2 GiB of keys or values for one Arrow array");
    int32_t end = (int32_t)c->data.length;
    c->length++;
    return buffer_append(&c->offsets, &end, 4);
}

static void
binary_clear(BinaryColumn *c)
{
    Py_CLEAR(c->offsets.array);
    Py_CLEAR(c->data.array);
    Py_CLEAR(c->validity.array);
}

/* (offsets, data, validity, null_count) */
static PyObject *
binary_finish(BinaryColumn *c)
{
    PyObject *offsets = buffer_finish(&c->offsets);
    PyObject *data = offsets ? buffer_finish(&c->data) : NULL;
    PyObject *validity = data ? buffer_finish(&c->validity) : NULL;
    if (validity == NULL) {
        Py_XDECREF(offsets);
        Py_XDECREF(data);
        return NULL;
    }
    return Py_BuildValue("NNNn", offsets, data, validity, c->null_count);
}

/* Where decoded records go: the Arrow columns of decode, or the objects of decode_objects.
 * `record` is called for each kept record, in order; it returns -1 with an exception set. */
typedef struct BatchFields BatchFields;
typedef struct RecordView RecordView;
typedef struct Sink Sink;
struct Sink {
    int (*record)(Sink *sink, const BatchFields *batch, RecordView *record);
};

typedef struct {
    Sink sink;            /* first: a Columns is its Sink */
    Py_ssize_t count;
    BinaryColumn key, value;
    Buffer offset, timestamp, timestamp_type;
    /* list<struct<key, value>>: offsets int32[count + 1], and null (not an empty list) for a
     * record without headers, as Spark's Kafka source gives it */
    Buffer header_offsets;
    Buffer header_validity;
    Py_ssize_t header_null_count;
    BinaryColumn header_key, header_value;
} Columns;

static int
columns_init(Columns *c, Py_ssize_t rows, Py_ssize_t data_bytes)
{
    int32_t zero = 0;
    memset(c, 0, sizeof *c);
    if (binary_init(&c->key, rows, 0) < 0 || binary_init(&c->value, rows, data_bytes) < 0
            || buffer_init(&c->offset, rows * 8) < 0 || buffer_init(&c->timestamp, rows * 8) < 0
            || buffer_init(&c->timestamp_type, rows * 4) < 0
            || buffer_init(&c->header_offsets, (rows + 1) * 4) < 0
            || buffer_init(&c->header_validity, rows / 8 + 1) < 0
            || binary_init(&c->header_key, 0, 0) < 0 || binary_init(&c->header_value, 0, 0) < 0)
        return -1;
    return buffer_append(&c->header_offsets, &zero, 4);
}

static void
columns_clear(Columns *c)
{
    binary_clear(&c->key);
    binary_clear(&c->value);
    Py_CLEAR(c->offset.array);
    Py_CLEAR(c->timestamp.array);
    Py_CLEAR(c->timestamp_type.array);
    Py_CLEAR(c->header_offsets.array);
    Py_CLEAR(c->header_validity.array);
    binary_clear(&c->header_key);
    binary_clear(&c->header_value);
}

static PyObject *
columns_finish(Columns *c)
{
    PyObject *key = binary_finish(&c->key);
    PyObject *value = binary_finish(&c->value);
    PyObject *offset = buffer_finish(&c->offset);
    PyObject *timestamp = buffer_finish(&c->timestamp);
    PyObject *timestamp_type = buffer_finish(&c->timestamp_type);
    PyObject *header_offsets = buffer_finish(&c->header_offsets);
    PyObject *header_validity = buffer_finish(&c->header_validity);
    PyObject *header_key = binary_finish(&c->header_key);
    PyObject *header_value = binary_finish(&c->header_value);
    if (!key || !value || !offset || !timestamp || !timestamp_type || !header_offsets
            || !header_validity || !header_key || !header_value) {
        Py_XDECREF(key); Py_XDECREF(value); Py_XDECREF(offset); Py_XDECREF(timestamp);
        Py_XDECREF(timestamp_type); Py_XDECREF(header_offsets); Py_XDECREF(header_validity);
        Py_XDECREF(header_key); Py_XDECREF(header_value);
        return NULL;
    }
    return Py_BuildValue("nNNNNN(NNnnNN)", c->count, key, value, offset, timestamp, timestamp_type,
                         header_offsets, header_validity, c->header_null_count,
                         c->header_key.length, header_key, header_value);
}

/* -- reading ------------------------------------------------------------------------------ */

/* A cursor over one record array; `end` is never passed. */
typedef struct {
    const uint8_t *at;
    const uint8_t *start;
    const uint8_t *end;
    Py_ssize_t position;    /* of the batch in the caller's buffer, for error messages */
} Cursor;

static inline uint32_t
be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static inline int64_t
be64(const uint8_t *p)
{
    return (int64_t)(((uint64_t)be32(p) << 32) | be32(p + 4));
}

/* An unsigned base-128 number of at most `max_bytes` bytes (varint.py's _decode_unsigned). */
static int
read_unsigned(Cursor *c, int max_bytes, uint64_t *z)
{
    uint64_t value = 0;
    for (int i = 0; i < max_bytes; i++) {
        if (c->at >= c->end)
            return corrupt(c->position, "records are truncated (a varint runs past the end)");
        uint8_t byte = *c->at++;
        if (i == MAX_VARLONG_BYTES - 1 && (byte & PAYLOAD_MASK) > 1)
            return corrupt(c->position, "records are ill-formed (a varlong overflows int64)");
        value |= (uint64_t)(byte & PAYLOAD_MASK) << (PAYLOAD_BITS * i);
        if (byte < CONTINUATION_BIT) {
            *z = value;
            return 0;
        }
    }
    return corrupt(c->position, "records are ill-formed (a varint is longer than %d bytes)",
                   max_bytes);
}

/* One- and two-byte varints inline (a 100-byte value's length takes two); longer ones go
 * through read_unsigned. Returns 1 when it read one. */
HOT int
read_short_unsigned(Cursor *c, uint64_t *z)
{
    if (c->end - c->at >= 2) {
        uint8_t b0 = c->at[0], b1 = c->at[1];
        if (b0 < CONTINUATION_BIT) {
            *z = b0;
            c->at += 1;
            return 1;
        }
        if (b1 < CONTINUATION_BIT) {
            *z = ((uint64_t)b1 << PAYLOAD_BITS) | (b0 & PAYLOAD_MASK);
            c->at += 2;
            return 1;
        }
    }
    return 0;
}

HOT int
read_varint(Cursor *c, int32_t *out)
{
    uint64_t z = 0;   /* set on success; zeroed to quiet -Wmaybe-uninitialized */
    if (!read_short_unsigned(c, &z)) {
        if (read_unsigned(c, MAX_VARINT_BYTES, &z) < 0)
            return -1;
        if (z > UINT32_MAX)
            return corrupt(c->position, "records are ill-formed (a varint overflows int32)");
    }
    *out = (int32_t)((uint32_t)(z >> 1) ^ (0u - (uint32_t)(z & 1)));   /* zigzag */
    return 0;
}

HOT int
read_varlong(Cursor *c, int64_t *out)
{
    uint64_t z = 0;   /* set on success; zeroed to quiet -Wmaybe-uninitialized */
    if (!read_short_unsigned(c, &z) && read_unsigned(c, MAX_VARLONG_BYTES, &z) < 0)
        return -1;
    *out = (int64_t)((z >> 1) ^ (0u - (z & 1)));   /* zigzag */
    return 0;
}

/* A nullable length (-1 = null) and, for a non-null one, the pointer to its bytes. */
HOT int
read_nullable_bytes(Cursor *c, const char *field, Py_ssize_t index, int32_t *size,
                    const uint8_t **bytes)
{
    if (read_varint(c, size) < 0)
        return -1;
    if (*size < 0) {
        if (*size != NULL_LENGTH)
            return corrupt(c->position, "record %zd: invalid %s length %d", index, field, *size);
        *bytes = NULL;
        return 0;
    }
    if (*size > c->end - c->at)
        return corrupt(c->position, "records are truncated (record %zd: %s of %d bytes runs "
                       "past the end)", index, field, *size);
    *bytes = c->at;
    c->at += *size;
    return 0;
}

/* The header array of one record, validated as decode_batch does (count, lengths, UTF-8 keys);
 * *first points at its first header, for a sink to walk with next_header. */
static int
read_headers(Cursor *c, Py_ssize_t index, int32_t *count_out, const uint8_t **first)
{
    int32_t count = 0;
    if (read_varint(c, &count) < 0)
        return -1;
    if (count < 0)
        return corrupt(c->position, "record %zd: invalid header count %d", index, count);
    *count_out = count;
    *first = c->at;
    for (int32_t i = 0; i < count; i++) {
        int32_t key_size = 0, value_size = 0;
        const uint8_t *key = NULL, *value = NULL;
        if (read_nullable_bytes(c, "header key", index, &key_size, &key) < 0)
            return -1;
        if (key == NULL)   /* a header key is never null */
            return corrupt(c->position, "record %zd: invalid header key length -1", index);
        /* Arrow strings must be valid UTF-8; decode_batch decodes the key the same way. */
        PyObject *text = PyUnicode_DecodeUTF8((const char *)key, key_size, "strict");
        if (text == NULL) {
            PyErr_Clear();
            return corrupt(c->position, "record %zd: a header key is not UTF-8", index);
        }
        Py_DECREF(text);
        if (read_nullable_bytes(c, "header value", index, &value_size, &value) < 0)
            return -1;
    }
    return 0;
}

/* The next header of an array read_headers validated (so it cannot fail on good memory). */
static int
next_header(Cursor *c, const uint8_t **key, int32_t *key_size, const uint8_t **value,
            int32_t *value_size)
{
    if (read_nullable_bytes(c, "header key", 0, key_size, key) < 0)
        return -1;
    return read_nullable_bytes(c, "header value", 0, value_size, value);
}

struct BatchFields {
    int64_t base_offset;
    int64_t base_timestamp;
    int64_t max_timestamp;
    int32_t partition_leader_epoch;
    int32_t records_count;
    int timestamp_type;
    int emit;             /* 0: a control batch the caller drops — decoded, checked, not kept */
};

/* One kept record, its bytes still in the caller's buffer. */
struct RecordView {
    int64_t offset;
    int64_t timestamp;
    const uint8_t *key, *value;   /* NULL for a null key or value (size NULL_LENGTH) */
    int32_t key_size, value_size;
    int32_t header_count;
    Cursor headers;               /* the header array after its count, for next_header */
};

static int
add_would_overflow(int64_t a, int64_t b)
{
    return (b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b);
}

/* One record at c->at; handed to `out` when the batch is kept and its offset lies in
 * [first, end). */
static int
decode_record(Cursor *c, const BatchFields *batch, Py_ssize_t index, int64_t first,
              int64_t end, Sink *out)
{
    RecordView r;
    int32_t length = 0, offset_delta = 0;
    int64_t timestamp_delta = 0;
    const uint8_t *headers = NULL;
    if (read_varint(c, &length) < 0)
        return -1;
    const uint8_t *record_start = c->at;
    if (c->at >= c->end)
        return corrupt(c->position, "records are truncated (record %zd)", index);
    c->at++;   /* attributes: int8, no bits defined */
    if (read_varlong(c, &timestamp_delta) < 0 || read_varint(c, &offset_delta) < 0)
        return -1;
    /* A LogAppendTime batch ignores the deltas: its records all take maxTimestamp. */
    if (add_would_overflow(batch->base_offset, offset_delta)
            || (batch->timestamp_type == CREATE_TIME
                && add_would_overflow(batch->base_timestamp, timestamp_delta)))
        return corrupt(c->position, "record %zd: offset or timestamp overflows int64", index);
    r.offset = batch->base_offset + offset_delta;
    if (read_nullable_bytes(c, "key", index, &r.key_size, &r.key) < 0
            || read_nullable_bytes(c, "value", index, &r.value_size, &r.value) < 0
            || read_headers(c, index, &r.header_count, &headers) < 0)
        return -1;
    if (c->at - record_start != length)
        return corrupt(c->position, "record %zd declares %d bytes but its fields take %zd",
                       index, length, (Py_ssize_t)(c->at - record_start));
    if (!batch->emit || r.offset < first || r.offset >= end)
        return 0;
    r.timestamp = batch->timestamp_type == LOG_APPEND_TIME
        ? batch->max_timestamp : batch->base_timestamp + timestamp_delta;
    r.headers = (Cursor){headers, headers, c->at, c->position};
    return out->record(out, batch, &r);
}

/* The record array of one batch: exactly `records_count` records filling [start, end). */
static int
decode_records(Cursor *c, const BatchFields *batch, int64_t first, int64_t end, Sink *out)
{
    for (Py_ssize_t index = 0; index < batch->records_count; index++) {
        if (decode_record(c, batch, index, first, end, out) < 0)
            return -1;
    }
    if (c->at != c->end)
        return corrupt(c->position, "the record array holds %zd bytes but its %d records take %zd",
                       (Py_ssize_t)(c->end - c->start), batch->records_count,
                       (Py_ssize_t)(c->at - c->start));
    return 0;
}

/* The records of a compressed batch, decompressed by Python, then decoded here. */
static int
decode_compressed(PyObject *decompress, int codec, const uint8_t *records, Py_ssize_t size,
                  Cursor *c, const BatchFields *batch, int64_t first, int64_t end, Sink *out)
{
    PyObject *raw = PyObject_CallFunction(decompress, "iy#n", codec, (const char *)records, size,
                                          c->position);
    if (raw == NULL)
        return -1;
    Py_buffer view;
    if (PyObject_GetBuffer(raw, &view, PyBUF_SIMPLE) < 0) {
        Py_DECREF(raw);
        return -1;
    }
    Cursor inner = {view.buf, view.buf, (const uint8_t *)view.buf + view.len, c->position};
    int result = decode_records(&inner, batch, first, end, out);
    PyBuffer_Release(&view);
    Py_DECREF(raw);
    return result;
}

/* The batch's CRC-32C over attributes..end, computed by the `crc32c` function handed in:
 * 0 with the value in *out, -1 with a Python error set. */
static int
batch_crc(PyObject *crc32c, const uint8_t *batch, Py_ssize_t size, unsigned long *out)
{
    PyObject *view = PyMemoryView_FromMemory((char *)batch + ATTRIBUTES_OFFSET,
                                             size - ATTRIBUTES_OFFSET, PyBUF_READ);
    if (view == NULL)
        return -1;
    PyObject *computed = PyObject_CallOneArg(crc32c, view);
    Py_DECREF(view);
    if (computed == NULL)
        return -1;
    unsigned long value = PyLong_AsUnsignedLong(computed);
    Py_DECREF(computed);
    if (value == (unsigned long)-1 && PyErr_Occurred())
        return -1;
    *out = value;
    return 0;
}

static int
verify_crc(PyObject *crc32c, const uint8_t *batch, Py_ssize_t size, Py_ssize_t position)
{
    unsigned long value;
    if (batch_crc(crc32c, batch, size, &value) < 0)
        return -1;
    uint32_t stored = be32(batch + CRC_OFFSET);
    if (value != stored)
        return corrupt(position, "CRC mismatch, stored 0x%08x, computed 0x%08lx", stored, value);
    return 0;
}

/* What becomes of a control batch (a transaction marker). */
enum { CONTROL_SKIP, CONTROL_DROP, CONTROL_KEEP };

/* The batch at data[position:]: header checks as record_batch.read_batch_header, then CRC,
 * then its records. Returns the batch size, or -1. */
static Py_ssize_t
decode_one_batch(const uint8_t *data, Py_ssize_t length, Py_ssize_t position, int64_t first,
                 int64_t end, PyObject *crc32c, PyObject *decompress, int control, Sink *out)
{
    const uint8_t *batch = data + position;
    Py_ssize_t available = length - position;
    if (available < RECORD_BATCH_OVERHEAD)
        return corrupt(position, "%zd bytes remain, fewer than the %d-byte batch header",
                       available, RECORD_BATCH_OVERHEAD);
    if (batch[MAGIC_OFFSET] != MAGIC)
        return corrupt(position, "magic %d, expected %d", (int)(int8_t)batch[MAGIC_OFFSET], MAGIC);
    int32_t batch_length = (int32_t)be32(batch + BATCH_LENGTH_OFFSET);
    if (batch_length < MIN_BATCH_LENGTH)
        return corrupt(position, "batchLength %d is below the minimum %d", batch_length,
                       MIN_BATCH_LENGTH);
    Py_ssize_t size = LOG_OVERHEAD + (Py_ssize_t)batch_length;
    if (size > available)
        return corrupt(position, "truncated batch: it declares %zd bytes, %zd remain", size,
                       available);
    if (crc32c != Py_None && verify_crc(crc32c, batch, size, position) < 0)
        return -1;
    int attributes = (batch[ATTRIBUTES_OFFSET] << 8) | batch[ATTRIBUTES_OFFSET + 1];
    int is_control = (attributes & CONTROL_FLAG_MASK) != 0;
    if (is_control && control == CONTROL_SKIP)
        return size;   /* a transaction marker: never a record for the application */
    BatchFields fields = {
        be64(batch), be64(batch + BASE_TIMESTAMP_OFFSET), be64(batch + MAX_TIMESTAMP_OFFSET),
        (int32_t)be32(batch + PARTITION_LEADER_EPOCH_OFFSET),
        (int32_t)be32(batch + RECORDS_COUNT_OFFSET),
        (attributes & TIMESTAMP_TYPE_MASK) ? LOG_APPEND_TIME : CREATE_TIME,
        !is_control || control == CONTROL_KEEP};
    Cursor c = {batch + RECORDS_OFFSET, batch + RECORDS_OFFSET, batch + size, position};
    int codec = attributes & COMPRESSION_CODEC_MASK;
    int result = codec == 0
        ? decode_records(&c, &fields, first, end, out)
        : decode_compressed(decompress, codec, c.start, size - RECORDS_OFFSET, &c, &fields,
                            first, end, out);
    return result < 0 ? -1 : size;
}

/* Every batch of data, back to back, into `out`. */
static int
decode_batches(const Py_buffer *data, int64_t first, int64_t end, PyObject *crc32c,
               PyObject *decompress, int control, Sink *out)
{
    Py_ssize_t position = 0;
    while (position < data->len) {
        Py_ssize_t size = decode_one_batch(data->buf, data->len, position, first, end, crc32c,
                                           decompress, control, out);
        if (size < 0)
            return -1;
        position += size;
    }
    return 0;
}

/* -- decode: records into Arrow columns -------------------------------------------------- */

static int
columns_add(Sink *sink, const BatchFields *batch, RecordView *r)
{
    Columns *out = (Columns *)sink;
    Py_ssize_t position = r->headers.position;
    for (int32_t i = 0; i < r->header_count; i++) {
        int32_t key_size = 0, value_size = 0;
        const uint8_t *key = NULL, *value = NULL;
        if (next_header(&r->headers, &key, &key_size, &value, &value_size) < 0
                || binary_append(&out->header_key, key, key_size, position) < 0
                || binary_append(&out->header_value, value, value_size, position) < 0)
            return -1;
    }
    int32_t type = batch->timestamp_type;
    int32_t header_end = (int32_t)out->header_key.length;
    if (bitmap_append(&out->header_validity, out->count, r->header_count > 0) < 0)
        return -1;
    out->header_null_count += r->header_count == 0;
    out->count++;
    if (binary_append(&out->key, r->key, r->key_size, position) < 0
            || binary_append(&out->value, r->value, r->value_size, position) < 0
            || buffer_append(&out->offset, &r->offset, 8) < 0
            || buffer_append(&out->timestamp, &r->timestamp, 8) < 0
            || buffer_append(&out->timestamp_type, &type, 4) < 0
            || buffer_append(&out->header_offsets, &header_end, 4) < 0)
        return -1;
    return 0;
}

static PyObject *
decode(PyObject *module, PyObject *args)
{
    Py_buffer data;
    long long first, end;
    PyObject *crc32c, *decompress;
    if (!PyArg_ParseTuple(args, "y*LLOO:decode", &data, &first, &end, &crc32c, &decompress))
        return NULL;
    Columns out;
    PyObject *result = NULL;
    /* A 100-byte record takes ~110 bytes in a batch: size the buffers for that up front. */
    if (columns_init(&out, data.len / 64 + 1, data.len) == 0) {
        out.sink.record = columns_add;
        if (decode_batches(&data, first, end, crc32c, decompress, CONTROL_SKIP, &out.sink) == 0)
            result = columns_finish(&out);
    }
    columns_clear(&out);
    PyBuffer_Release(&data);
    return result;
}

/* -- decode_objects: one Python object per record ----------------------------------------- */

/* What an attribute of the objects takes: a field of the record, or a constant. */
enum { FIELD_CONSTANT = -1, FIELD_OFFSET, FIELD_TIMESTAMP, FIELD_KEY, FIELD_VALUE, FIELD_HEADERS,
       FIELD_LEADER_EPOCH, FIELD_TIMESTAMP_TYPE, FIELD_COUNT };
#define MAX_ATTRIBUTES 16

typedef struct {
    Sink sink;                          /* first: an Objects is its Sink */
    PyObject *list;                     /* the records so far */
    PyTypeObject *cls;                  /* built as object.__new__(cls), then attribute by attribute */
    PyObject *no_args;                  /* () for object.__new__ */
    Py_ssize_t attribute_count;
    PyObject *names[MAX_ATTRIBUTES];    /* borrowed from the caller's `fields` */
    int codes[MAX_ATTRIBUTES];
    PyObject *constants[MAX_ATTRIBUTES];
    Py_ssize_t slots[MAX_ATTRIBUTES];   /* offset of a __slots__ member in the object, or -1 */
    PyObject *header_factory;           /* header_factory(key, value); None: (key, value) tuples */
    PyObject *timestamp;                /* the last timestamp's int, shared by the records having it */
} Objects;

static PyObject *
nullable_bytes(const uint8_t *bytes, int32_t size)
{
    if (bytes == NULL)
        Py_RETURN_NONE;
    return PyBytes_FromStringAndSize((const char *)bytes, size);
}

/* The record's headers as a tuple (the empty tuple when it has none, as decode_batch). */
static PyObject *
header_tuple(Objects *o, RecordView *r)
{
    PyObject *headers = PyTuple_New(r->header_count);
    for (int32_t i = 0; headers != NULL && i < r->header_count; i++) {
        int32_t key_size = 0, value_size = 0;
        const uint8_t *key = NULL, *value = NULL;
        PyObject *header = NULL;
        if (next_header(&r->headers, &key, &key_size, &value, &value_size) == 0) {
            PyObject *text = PyUnicode_DecodeUTF8((const char *)key, key_size, "strict");
            PyObject *data = text ? nullable_bytes(value, value_size) : NULL;
            if (data != NULL)
                header = o->header_factory == Py_None
                    ? PyTuple_Pack(2, text, data)
                    : PyObject_CallFunctionObjArgs(o->header_factory, text, data, NULL);
            Py_XDECREF(text);
            Py_XDECREF(data);
        }
        if (header == NULL)
            Py_CLEAR(headers);
        else
            PyTuple_SET_ITEM(headers, i, header);
    }
    return headers;
}

/* A new reference to the value of attribute i. */
static PyObject *
attribute_value(Objects *o, Py_ssize_t i, const BatchFields *batch, RecordView *r)
{
    switch (o->codes[i]) {
    case FIELD_OFFSET: return PyLong_FromLongLong(r->offset);
    case FIELD_TIMESTAMP:   /* a batch's records mostly share one timestamp: one int for them */
        if (o->timestamp == NULL || PyLong_AsLongLong(o->timestamp) != r->timestamp) {
            Py_XSETREF(o->timestamp, PyLong_FromLongLong(r->timestamp));
            if (o->timestamp == NULL)
                return NULL;
        }
        return Py_NewRef(o->timestamp);
    case FIELD_KEY: return nullable_bytes(r->key, r->key_size);
    case FIELD_VALUE: return nullable_bytes(r->value, r->value_size);
    case FIELD_HEADERS: return header_tuple(o, r);
    case FIELD_LEADER_EPOCH: return PyLong_FromLong(batch->partition_leader_epoch);
    case FIELD_TIMESTAMP_TYPE: return PyLong_FromLong(batch->timestamp_type);
    default: return Py_NewRef(o->constants[i]);
    }
}

static int
objects_add(Sink *sink, const BatchFields *batch, RecordView *r)
{
    Objects *o = (Objects *)sink;
    PyObject *record = PyBaseObject_Type.tp_new(o->cls, o->no_args, NULL);
    if (record == NULL)
        return -1;
    /* object.__setattr__, attribute by attribute in the caller's order: a frozen dataclass's
     * own __init__ does the same, so instances share its dict keys. */
    int atomic = 1;
    for (Py_ssize_t i = 0; i < o->attribute_count; i++) {
        PyObject *value = attribute_value(o, i, batch, r);
        if (value == NULL) {
            Py_DECREF(record);
            return -1;
        }
        atomic = atomic && !PyObject_GC_IsTracked(value);
        if (o->slots[i] >= 0) {   /* what the member descriptor's __set__ does, without the lookup */
            PyObject **slot = (PyObject **)((char *)record + o->slots[i]);
            Py_XSETREF(*slot, value);
        } else {
            int failed = PyObject_GenericSetAttr(record, o->names[i], value) < 0;
            Py_DECREF(value);
            if (failed) {
                Py_DECREF(record);
                return -1;
            }
        }
    }
    /* A record holding only atomic values (bytes, ints, str, None, the empty tuple) cannot be
     * part of a reference cycle: like CPython's tuples and dicts of atomic values, it is left
     * out of the cyclic garbage collector, which otherwise spends more time walking a fetch's
     * thousands of young records than decoding them took. */
    if (atomic && PyObject_IS_GC(record))
        PyObject_GC_UnTrack(record);
    int result = PyList_Append(o->list, record);
    Py_DECREF(record);
    return result;
}

/* Where object.__setattr__(obj, name, v) would store v when the class's attribute `name` is a
 * writable __slots__ member (a member descriptor of an object field): its offset in the object.
 * -1 otherwise (a __dict__ attribute, a property...): those go through object.__setattr__. */
static Py_ssize_t
slot_offset(PyTypeObject *cls, PyObject *name)
{
    PyObject *descr = _PyType_Lookup(cls, name);   /* borrowed; what object.__setattr__ finds */
    if (descr == NULL || !Py_IS_TYPE(descr, &PyMemberDescr_Type))
        return -1;
    PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
    return member->type == T_OBJECT_EX && !(member->flags & READONLY) ? member->offset : -1;
}

/* fields: ((name, code, constant), ...) with code FIELD_* (FIELD_CONSTANT: take `constant`). */
static int
objects_init(Objects *o, PyTypeObject *cls, PyObject *fields, PyObject *header_factory)
{
    memset(o, 0, sizeof *o);
    o->sink.record = objects_add;
    o->cls = cls;
    o->header_factory = header_factory;
    if (cls->tp_new != PyBaseObject_Type.tp_new) {
        PyErr_Format(PyExc_TypeError, "decode_objects: %s defines __new__", cls->tp_name);
        return -1;
    }
    o->attribute_count = PyTuple_GET_SIZE(fields);
    if (o->attribute_count > MAX_ATTRIBUTES) {
        PyErr_Format(PyExc_ValueError, "decode_objects: more than %d attributes", MAX_ATTRIBUTES);
        return -1;
    }
    for (Py_ssize_t i = 0; i < o->attribute_count; i++) {
        PyObject *field = PyTuple_GET_ITEM(fields, i);
        if (!PyArg_ParseTuple(field, "UiO:decode_objects field", &o->names[i], &o->codes[i],
                              &o->constants[i]))
            return -1;
        if (o->codes[i] < FIELD_CONSTANT || o->codes[i] >= FIELD_COUNT) {
            PyErr_Format(PyExc_ValueError, "decode_objects: unknown field code %d", o->codes[i]);
            return -1;
        }
        o->slots[i] = slot_offset(cls, o->names[i]);
    }
    o->no_args = PyTuple_New(0);
    o->list = o->no_args ? PyList_New(0) : NULL;
    return o->list ? 0 : -1;
}

static PyObject *
decode_objects(PyObject *module, PyObject *args)
{
    Py_buffer data;
    long long first, end;
    int keep_control;
    PyObject *crc32c, *decompress, *fields, *header_factory;
    PyTypeObject *cls;
    if (!PyArg_ParseTuple(args, "y*LLOOpO!O!O:decode_objects", &data, &first, &end, &crc32c,
                          &decompress, &keep_control, &PyType_Type, &cls, &PyTuple_Type, &fields,
                          &header_factory))
        return NULL;
    Objects out;
    PyObject *result = NULL;
    if (objects_init(&out, cls, fields, header_factory) == 0
            && decode_batches(&data, first, end, crc32c, decompress,
                              keep_control ? CONTROL_KEEP : CONTROL_DROP, &out.sink) == 0)
        result = Py_NewRef(out.list);
    Py_XDECREF(out.list);
    Py_XDECREF(out.no_args);
    Py_XDECREF(out.timestamp);
    PyBuffer_Release(&data);
    return result;
}

/* -- encode_records: the record array of a batch ------------------------------------------ */

static inline uint64_t
zigzag(int64_t value)
{
    return ((uint64_t)value << 1) ^ (uint64_t)(value >> 63);
}

/* The zigzag varint of `value` (varint and varlong agree on every int32). */
static inline int
varint_size(int64_t value)
{
    uint64_t z = zigzag(value);
    int size = 1;
    while (z >= CONTINUATION_BIT) {
        z >>= PAYLOAD_BITS;
        size++;
    }
    return size;
}

static inline uint8_t *
put_varint(uint8_t *at, int64_t value)
{
    uint64_t z = zigzag(value);
    while (z >= CONTINUATION_BIT) {
        *at++ = (uint8_t)(z | CONTINUATION_BIT);
        z >>= PAYLOAD_BITS;
    }
    *at++ = (uint8_t)z;
    return at;
}

/* One record's fields, when this encoder handles it: a (key, value), (key, value, timestamp)
 * or (key, value, timestamp, no headers) tuple of bytes or None and an int or None. */
typedef struct {
    const char *key, *value;      /* NULL for None */
    Py_ssize_t key_size, value_size;
    int64_t timestamp_delta;
    int64_t body_size;            /* bytes after the length varint */
} EncodedRecord;

static int
nullable_field(PyObject *item, const char **bytes, Py_ssize_t *size)
{
    if (item == Py_None) {
        *bytes = NULL;
        *size = NULL_LENGTH;
        return 1;
    }
    if (!PyBytes_CheckExact(item) || PyBytes_GET_SIZE(item) > INT32_MAX)
        return 0;
    *bytes = PyBytes_AS_STRING(item);
    *size = PyBytes_GET_SIZE(item);
    return 1;
}

/* 1 when `record` is a form this encoder handles (fields filled), 0 when not, -1 on error. */
static int
record_fields(PyObject *record, Py_ssize_t offset_delta, long long base_timestamp,
              EncodedRecord *out, long long *timestamp)
{
    Py_ssize_t n = PyTuple_CheckExact(record) ? PyTuple_GET_SIZE(record) : 0;
    if (n < 2 || n > 4)
        return 0;
    if (!nullable_field(PyTuple_GET_ITEM(record, 0), &out->key, &out->key_size)
            || !nullable_field(PyTuple_GET_ITEM(record, 1), &out->value, &out->value_size))
        return 0;
    *timestamp = base_timestamp;
    PyObject *ts = n >= 3 ? PyTuple_GET_ITEM(record, 2) : Py_None;
    if (ts != Py_None) {
        int overflow = 0;
        if (!PyLong_CheckExact(ts))
            return 0;
        *timestamp = PyLong_AsLongLongAndOverflow(ts, &overflow);
        if (overflow || (*timestamp == -1 && PyErr_Occurred()))
            return PyErr_Occurred() ? -1 : 0;
    }
    if (n == 4) {   /* headers: only none at all is handled here */
        int has_headers = PyObject_IsTrue(PyTuple_GET_ITEM(record, 3));
        if (has_headers != 0)
            return has_headers < 0 ? -1 : 0;
    }
    if (base_timestamp == INT64_MIN || add_would_overflow(*timestamp, -base_timestamp))
        return 0;
    out->timestamp_delta = *timestamp - base_timestamp;
    out->body_size = 1 + varint_size(out->timestamp_delta) + varint_size(offset_delta)
        + varint_size(out->key_size) + (out->key ? out->key_size : 0)
        + varint_size(out->value_size) + (out->value ? out->value_size : 0) + 1;
    return out->body_size <= INT32_MAX;
}

static uint8_t *
put_record(uint8_t *at, const EncodedRecord *r, Py_ssize_t offset_delta)
{
    at = put_varint(at, r->body_size);
    *at++ = 0;   /* attributes */
    at = put_varint(at, r->timestamp_delta);
    at = put_varint(at, offset_delta);
    at = put_varint(at, r->key_size);
    if (r->key) {
        memcpy(at, r->key, (size_t)r->key_size);
        at += r->key_size;
    }
    at = put_varint(at, r->value_size);
    if (r->value) {
        memcpy(at, r->value, (size_t)r->value_size);
        at += r->value_size;
    }
    *at++ = 0;   /* headers count */
    return at;
}

static PyObject *
encode_records(PyObject *module, PyObject *args)
{
    PyObject *records, *base;
    if (!PyArg_ParseTuple(args, "O!O!:encode_records", &PyList_Type, &records, &PyLong_Type, &base))
        return NULL;
    int overflow = 0;
    long long base_timestamp = PyLong_AsLongLongAndOverflow(base, &overflow);
    if (base_timestamp == -1 && PyErr_Occurred())
        return NULL;
    if (overflow)   /* beyond int64: Python's encoder refuses it with its own error */
        Py_RETURN_NONE;
    Py_ssize_t count = PyList_GET_SIZE(records);
    EncodedRecord *fields = PyMem_Malloc(sizeof(EncodedRecord) * (size_t)(count ? count : 1));
    if (fields == NULL)
        return PyErr_NoMemory();
    PyObject *result = NULL;
    long long max_timestamp = -1, timestamp = 0;   /* NO_TIMESTAMP */
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        int handled = record_fields(PyList_GET_ITEM(records, i), i, base_timestamp, &fields[i],
                                    &timestamp);
        if (handled <= 0) {
            result = handled < 0 ? NULL : Py_NewRef(Py_None);
            goto done;
        }
        if (timestamp > max_timestamp)
            max_timestamp = timestamp;
        total += varint_size(fields[i].body_size) + fields[i].body_size;
    }
    PyObject *body = PyBytes_FromStringAndSize(NULL, total);
    if (body != NULL) {
        uint8_t *at = (uint8_t *)PyBytes_AS_STRING(body);
        for (Py_ssize_t i = 0; i < count; i++)
            at = put_record(at, &fields[i], i);
        result = Py_BuildValue("NL", body, max_timestamp);
    }
done:
    PyMem_Free(fields);
    return result;
}

/* -- records_fill: an append's record walk (the leader's LogValidator pass) ---------------- */

/* A varint (max_bytes 5) or varlong (10) at data[*pos], as varint.decode_varint/decode_varlong
 * read it; -1 (no exception) wherever those raise IndexError or ValueError. */
static int
peek_varint(const uint8_t *data, Py_ssize_t size, Py_ssize_t *pos, int max_bytes, int64_t *out)
{
    uint64_t z = 0;
    for (int i = 0; i < max_bytes; i++) {
        if (*pos + i >= size)
            return -1;
        uint8_t byte = data[*pos + i];
        if (i == MAX_VARLONG_BYTES - 1 && (byte & PAYLOAD_MASK) > 1)
            return -1;   /* beyond uint64 */
        z |= (uint64_t)(byte & PAYLOAD_MASK) << (PAYLOAD_BITS * i);
        if (byte < CONTINUATION_BIT) {
            if (max_bytes == MAX_VARINT_BYTES && z > UINT32_MAX)
                return -1;
            *pos += i + 1;
            *out = (int64_t)((z >> 1) ^ (0u - (z & 1)));   /* zigzag */
            return 0;
        }
    }
    return -1;   /* longer than max_bytes */
}

/* Whether `count` records, stepped over by their length prefixes, fill data[0:size] exactly —
 * and, with check_keys, none has a null key: exactly when log_validator's Python walk passes. */
static int
records_walk_ok(const uint8_t *data, Py_ssize_t size, long long count, int check_keys)
{
    Py_ssize_t pos = 0;
    int fills = 1;
    for (long long index = 0; fills && index < count; index++) {
        int64_t length = 0, field = 0;
        if (pos >= size || peek_varint(data, size, &pos, MAX_VARINT_BYTES, &length) < 0
                || length <= 0 || length > size - pos) {
            fills = 0;
            break;
        }
        Py_ssize_t start = pos;
        pos = start + (Py_ssize_t)length;
        if (check_keys) {   /* attributes, timestampDelta, offsetDelta, then keyLength */
            Py_ssize_t at = start + 1;
            fills = peek_varint(data, size, &at, MAX_VARLONG_BYTES, &field) == 0
                && peek_varint(data, size, &at, MAX_VARINT_BYTES, &field) == 0
                && peek_varint(data, size, &at, MAX_VARINT_BYTES, &field) == 0
                && field >= 0;
        }
    }
    return fills && pos == size;
}

/* True when `count` records fill `data` exactly (records_walk_ok). False for anything else, and
 * the caller walks again in Python for the precise error. */
static PyObject *
records_fill(PyObject *module, PyObject *args)
{
    Py_buffer view;
    long long count;
    int check_keys;
    if (!PyArg_ParseTuple(args, "y*Lp:records_fill", &view, &count, &check_keys))
        return NULL;
    int fills = records_walk_ok(view.buf, view.len, count, check_keys);
    PyBuffer_Release(&view);
    return PyBool_FromLong(fills);
}

/* -- leader_batch_ok: a leader's append checked in one call ------------------------------------ */

/* Whether `data` is one whole, uncompressed batch that log_validator.validate_leader_append accepts:
 * read_batch_header's checks (room for a header, magic 2, batchLength at least a header's), size
 * within max_message_bytes, exactly one batch filling the buffer, its CRC-32C right (crc32c(view)
 * -> int), recordsCount positive and equal to lastOffsetDelta + 1, and its records filling it
 * (records_walk_ok). 0 for anything else — a refusal, several batches, a compressed batch — and
 * the caller runs the Python checks, which name the refusal (or pass a compressed batch). -1 with
 * an exception only if crc32c raises. */
static int
leader_batch_check(const uint8_t *data, Py_ssize_t length, long long max_message_bytes,
                   int check_keys, PyObject *crc32c)
{
    if (length < RECORD_BATCH_OVERHEAD || data[MAGIC_OFFSET] != MAGIC)
        return 0;
    int32_t batch_length = (int32_t)be32(data + BATCH_LENGTH_OFFSET);
    Py_ssize_t size = LOG_OVERHEAD + (Py_ssize_t)batch_length;
    if (batch_length < MIN_BATCH_LENGTH || size > max_message_bytes || size != length)
        return 0;
    int attributes = (data[ATTRIBUTES_OFFSET] << 8) | data[ATTRIBUTES_OFFSET + 1];
    int64_t last_offset_delta = (int32_t)be32(data + LAST_OFFSET_DELTA_OFFSET);
    int64_t records_count = (int32_t)be32(data + RECORDS_COUNT_OFFSET);
    if ((attributes & COMPRESSION_CODEC_MASK) != 0 || records_count <= 0
            || records_count != last_offset_delta + 1)
        return 0;
    unsigned long crc;
    if (batch_crc(crc32c, data, size, &crc) < 0)
        return -1;
    if (crc != be32(data + CRC_OFFSET))
        return 0;
    return records_walk_ok(data + RECORDS_OFFSET, size - RECORDS_OFFSET, records_count, check_keys);
}

static PyObject *
leader_batch_ok(PyObject *module, PyObject *args)
{
    Py_buffer view;
    long long max_message_bytes;
    int check_keys;
    PyObject *crc32c;
    if (!PyArg_ParseTuple(args, "y*LpO:leader_batch_ok", &view, &max_message_bytes, &check_keys, &crc32c))
        return NULL;
    int ok = leader_batch_check(view.buf, view.len, max_message_bytes, check_keys, crc32c);
    PyBuffer_Release(&view);
    return ok < 0 ? NULL : PyBool_FromLong(ok);
}

/* -- untrack_atomic: objects of atomic values left out of the cyclic GC ------------------------- */

/* Whether every attribute of `obj` is atomic — not tracked by the collector (bytes, int, str,
 * None, the empty tuple...) — for an object whose class keeps its attributes in __slots__ of its
 * own, directly over `object` (no __dict__, no variable part): then those slots are all it refers
 * to, besides its class. */
static int
slots_all_atomic(PyObject *obj)
{
    PyTypeObject *type = Py_TYPE(obj);
    if (type->tp_base != &PyBaseObject_Type || type->tp_dictoffset != 0 || type->tp_itemsize != 0
            || type->tp_members == NULL)
        return 0;
    for (PyMemberDef *member = type->tp_members; member->name != NULL; member++) {
        if (member->type != T_OBJECT_EX && member->type != T_OBJECT)
            continue;
        PyObject *value = *(PyObject **)((char *)obj + member->offset);
        if (value != NULL && PyObject_GC_IsTracked(value))
            return 0;
    }
    return 1;
}

/* `obj`, if it holds only atomic values (slots_all_atomic), is left out of the cyclic garbage
 * collector, as decode_objects leaves out the records it builds: it cannot be part of a reference
 * cycle, and a producer's hundreds of thousands of pending records otherwise cost the collector
 * more than sending them. Returns whether it was (or already was untracked). */
static PyObject *
untrack_atomic(PyObject *module, PyObject *obj)
{
    if (PyObject_GC_IsTracked(obj)) {
        if (!slots_all_atomic(obj))
            Py_RETURN_FALSE;
        PyObject_GC_UnTrack(obj);
    }
    Py_RETURN_TRUE;
}

static PyMethodDef methods[] = {
    {"decode", decode, METH_VARARGS,
     "decode(data, first_offset, end_offset, crc32c, decompress) -> column buffers\n\n"
     "The records of the v2 batches in data with first_offset <= offset < end_offset, as Arrow\n"
     "buffers; see engine/storage/columnar.py."},
    {"decode_objects", decode_objects, METH_VARARGS,
     "decode_objects(data, first_offset, end_offset, crc32c, decompress, keep_control, cls,\n"
     "               fields, header_factory) -> list\n\n"
     "The records of the v2 batches in data with first_offset <= offset < end_offset, one\n"
     "object of cls each; see engine/storage/batch_records.py."},
    {"encode_records", encode_records, METH_VARARGS,
     "encode_records(records, base_timestamp) -> (record array, max_timestamp) or None\n\n"
     "The record array of an uncompressed v2 batch; see record_batch.encode_batch."},
    {"records_fill", records_fill, METH_VARARGS,
     "records_fill(data, count, check_keys) -> bool\n\n"
     "Whether count records fill data exactly by their length prefixes (and, with check_keys,\n"
     "none has a null key); see engine/storage/log_validator.py."},
    {"leader_batch_ok", leader_batch_ok, METH_VARARGS,
     "leader_batch_ok(data, max_message_bytes, check_keys, crc32c) -> bool\n\n"
     "Whether data is one uncompressed batch a leader's append accepts; see\n"
     "engine/storage/log_validator.py (validate_leader_append)."},
    {"untrack_atomic", untrack_atomic, METH_O,
     "untrack_atomic(obj) -> bool\n\n"
     "Leaves obj out of the cyclic garbage collector if its __slots__ hold only atomic values;\n"
     "see engine/clients/producer.py (ProducedRecord)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "engine.storage._columnar",
    "The C fast paths of v2 record batches (see engine/storage/_columnar.c).", -1, methods,
};

PyMODINIT_FUNC
PyInit__columnar(void)
{
    return PyModule_Create(&module);
}
