/* engine.storage._columnar: v2 record batches straight to Arrow column buffers.
 *
 * The fast path of engine/broker/columnar.py (read that module first: it owns the Python API,
 * the pure-Python fallback of identical output, and wraps these buffers into Arrow arrays).
 * The byte layout is the one documented in record_batch.py; the constants below mirror it.
 *
 *   decode(data, first_offset, end_offset, crc32c, decompress) ->
 *       (count, key, value, offsets, timestamps, timestamp_types, headers)
 *
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
 * Only records with first_offset <= offset < end_offset are kept (a fetch returns whole
 * batches, so the first and last may straddle the range). Control batches (transaction
 * markers) are skipped, as Kafka's consumer never hands control records to the application.
 * crc32c is called per batch on attributes..end unless it is None; decompress(codec, bytes,
 * position) -> bytes handles compressed batches in Python (the records inside are then
 * decoded here).
 *
 * Safety: data comes off the network. Every length is checked against the end of its buffer
 * before anything is read; ill-formed input raises record_batch.CorruptRecordError with the
 * same acceptance rules as record_batch.decode_batch.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Batch header layout (record_batch.py: HEADER_STRUCT and the *_OFFSET constants). */
#define BATCH_LENGTH_OFFSET 8
#define MAGIC_OFFSET 16
#define CRC_OFFSET 17
#define ATTRIBUTES_OFFSET 21
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

static PyObject *CorruptRecordError;  /* engine.storage.record_batch.CorruptRecordError */

/* Raise CorruptRecordError("batch at position P: ...", P). Returns -1 for `return corrupt(...)`. */
static int
corrupt(Py_ssize_t position, const char *format, ...)
{
    char detail[256];
    va_list args;
    va_start(args, format);
    vsnprintf(detail, sizeof detail, format, args);
    va_end(args);
    PyObject *error = PyObject_CallFunction(CorruptRecordError, "Nn",
        PyUnicode_FromFormat("batch at position %zd: %s", position, detail), position);
    if (error != NULL) {
        PyErr_SetObject(CorruptRecordError, error);
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

typedef struct {
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

static int
read_headers(Cursor *c, Columns *out, Py_ssize_t index, int keep, int32_t *count_out)
{
    int32_t count = 0;
    if (read_varint(c, &count) < 0)
        return -1;
    if (count < 0)
        return corrupt(c->position, "record %zd: invalid header count %d", index, count);
    *count_out = count;
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
        if (keep && (binary_append(&out->header_key, key, key_size, c->position) < 0
                     || binary_append(&out->header_value, value, value_size, c->position) < 0))
            return -1;
    }
    return 0;
}

typedef struct {
    int64_t base_offset;
    int64_t base_timestamp;
    int64_t max_timestamp;
    int32_t records_count;
    int timestamp_type;
} BatchFields;

static int
add_would_overflow(int64_t a, int64_t b)
{
    return (b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b);
}

/* One record at c->at; appended to `out` when its offset lies in [first, end). */
static int
decode_record(Cursor *c, const BatchFields *batch, Py_ssize_t index, int64_t first,
              int64_t end, Columns *out)
{
    int32_t length = 0, offset_delta = 0, key_size = 0, value_size = 0, header_count = 0;
    int64_t timestamp_delta = 0;
    const uint8_t *key = NULL, *value = NULL;
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
    int64_t offset = batch->base_offset + offset_delta;
    int keep = first <= offset && offset < end;
    if (read_nullable_bytes(c, "key", index, &key_size, &key) < 0
            || read_nullable_bytes(c, "value", index, &value_size, &value) < 0
            || read_headers(c, out, index, keep, &header_count) < 0)
        return -1;
    if (c->at - record_start != length)
        return corrupt(c->position, "record %zd declares %d bytes but its fields take %zd",
                       index, length, (Py_ssize_t)(c->at - record_start));
    if (!keep)
        return 0;
    int64_t timestamp = batch->timestamp_type == LOG_APPEND_TIME
        ? batch->max_timestamp : batch->base_timestamp + timestamp_delta;
    int32_t type = batch->timestamp_type;
    int32_t header_end = (int32_t)out->header_key.length;
    if (bitmap_append(&out->header_validity, out->count, header_count > 0) < 0)
        return -1;
    out->header_null_count += header_count == 0;
    out->count++;
    if (binary_append(&out->key, key, key_size, c->position) < 0
            || binary_append(&out->value, value, value_size, c->position) < 0
            || buffer_append(&out->offset, &offset, 8) < 0
            || buffer_append(&out->timestamp, &timestamp, 8) < 0
            || buffer_append(&out->timestamp_type, &type, 4) < 0
            || buffer_append(&out->header_offsets, &header_end, 4) < 0)
        return -1;
    return 0;
}

/* The record array of one batch: exactly `records_count` records filling [start, end). */
static int
decode_records(Cursor *c, const BatchFields *batch, int64_t first, int64_t end, Columns *out)
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
                  Cursor *c, const BatchFields *batch, int64_t first, int64_t end, Columns *out)
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

static int
verify_crc(PyObject *crc32c, const uint8_t *batch, Py_ssize_t size, Py_ssize_t position)
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
    uint32_t stored = be32(batch + CRC_OFFSET);
    if (value != stored)
        return corrupt(position, "CRC mismatch, stored 0x%08x, computed 0x%08lx", stored, value);
    return 0;
}

/* The batch at data[position:]: header checks as record_batch.read_batch_header, then CRC,
 * then its records. Returns the batch size, or -1. */
static Py_ssize_t
decode_one_batch(const uint8_t *data, Py_ssize_t length, Py_ssize_t position, int64_t first,
                 int64_t end, PyObject *crc32c, PyObject *decompress, Columns *out)
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
    if (attributes & CONTROL_FLAG_MASK)
        return size;   /* a transaction marker: never a record for the application */
    BatchFields fields = {
        be64(batch), be64(batch + BASE_TIMESTAMP_OFFSET), be64(batch + MAX_TIMESTAMP_OFFSET),
        (int32_t)be32(batch + RECORDS_COUNT_OFFSET),
        (attributes & TIMESTAMP_TYPE_MASK) ? LOG_APPEND_TIME : CREATE_TIME};
    Cursor c = {batch + RECORDS_OFFSET, batch + RECORDS_OFFSET, batch + size, position};
    int codec = attributes & COMPRESSION_CODEC_MASK;
    int result = codec == 0
        ? decode_records(&c, &fields, first, end, out)
        : decode_compressed(decompress, codec, c.start, size - RECORDS_OFFSET, &c, &fields,
                            first, end, out);
    return result < 0 ? -1 : size;
}

static PyObject *
decode(PyObject *module, PyObject *args)
{
    Py_buffer data;
    long long first, end;
    PyObject *crc32c, *decompress;
    if (!PyArg_ParseTuple(args, "y*LLOO:decode", &data, &first, &end, &crc32c, &decompress))
        return NULL;
    const uint8_t *bytes = data.buf;
    Columns out;
    /* A 100-byte record takes ~110 bytes in a batch: size the buffers for that up front. */
    if (columns_init(&out, data.len / 64 + 1, data.len) < 0) {
        columns_clear(&out);
        PyBuffer_Release(&data);
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t position = 0;
    while (position < data.len) {
        Py_ssize_t size = decode_one_batch(bytes, data.len, position, first, end, crc32c,
                                           decompress, &out);
        if (size < 0)
            goto done;
        position += size;
    }
    result = columns_finish(&out);
done:
    columns_clear(&out);
    PyBuffer_Release(&data);
    return result;
}

static PyMethodDef methods[] = {
    {"decode", decode, METH_VARARGS,
     "decode(data, first_offset, end_offset, crc32c, decompress) -> column buffers\n\n"
     "The records of the v2 batches in data with first_offset <= offset < end_offset, as Arrow\n"
     "buffers; see engine/broker/columnar.py."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "engine.storage._columnar",
    "v2 record batches to Arrow column buffers (see engine/broker/columnar.py).", -1, methods,
};

PyMODINIT_FUNC
PyInit__columnar(void)
{
    PyObject *record_batch = PyImport_ImportModule("engine.storage.record_batch");
    if (record_batch == NULL)
        return NULL;
    CorruptRecordError = PyObject_GetAttrString(record_batch, "CorruptRecordError");
    Py_DECREF(record_batch);
    if (CorruptRecordError == NULL)
        return NULL;
    return PyModule_Create(&module);
}
