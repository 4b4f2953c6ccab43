/* The C steps of the taggers' inference. lstm_step: one time step of the skip-LSTM's scan, fused:
 * everything after the recurrent matrix product, in one pass over the state instead of a dozen
 * tensor calls (tagger/modules/recurrent.py, _scan_fused, says what it computes and when it is
 * used); window_sum and scan_order: the first layer's and the upper layers' input projections laid
 * out for the scan; and, further down, bf16 product kernels and whole-layer scans. Plain C on raw
 * float32 (and bfloat16) buffers handed over as addresses and strides; the GIL is released while
 * it runs, so batches in threads run it in parallel. Built by `pip install` when a C compiler is
 * there; without it the scan stays in torch (the same arithmetic, to the last bits of exp).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CLONES
#endif

/* exp(x) as Cephes' expf: 2^n · p(r), a few ulp from libm's, written so that the loops below
 * vectorise (no calls, no branches). */
static inline float fast_exp(float x) {
    x = x > 88.37626f ? 88.37626f : x;
    x = x < -87.33654f ? -87.33654f : x;
    /* n = round(x / ln 2) by the 1.5·2^23 trick (no floor call, which SSE2 lacks) */
    float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    float r = x - n * 0.693359375f + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    int32_t bits = ((int32_t)n + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

static inline float sigmoid(float x) { return 1.0f / (1.0f + fast_exp(-x)); }

/* tanh(x) = 2σ(2x) - 1, as the torch scan computes it */
static inline float tanh_(float x) { return 2.0f / (1.0f + fast_exp(-2.0f * x)) - 1.0f; }

static inline float bf16_to_float(uint16_t v) {
    uint32_t bits = (uint32_t)v << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline uint16_t float_to_bf16(float f) { /* round to nearest even, as torch's .to(bfloat16) */
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    bits += 0x7FFFu + ((bits >> 16) & 1u);
    return (uint16_t)(bits >> 16);
}

typedef struct {
    int64_t batch, hidden, nsig, lowered, kmode, masked_now;
    const void *prod; int64_t prod_d, prod_b;
    const float *gx; int64_t gx_d, gx_b;
    float *c; int64_t c_d, c_b;
    float *h; int64_t h_d, h_b;
    uint16_t *hlow; int64_t hlow_d, hlow_b;
    const float *k; int64_t k_d, k_b;
    const float *mask; int64_t mask_d, mask_b;
} Step;

/* c = f⊙c + i⊙tanh(s); h = o⊙tanh(c) (+ γ⊙k, + k or + o⊙k by kmode); both times the mask m. The
 * gates' σ and tanh(s) are taken first, each in a loop of its own over its row, written over the
 * pre-activations (every caller's z is scratch, rewritten each step), then c and h: the same
 * operations per element as in one loop, and the same floats (tests/test_c_builds.py, GCC and
 * clang, x86-64 with and without AVX2 and AVX-512), but vectorised better than one loop with
 * every exponential inline (AVX2, GCC, H = 128: the cell 1.26-1.35x as fast; the scores of 1,000 EWT
 * dev sentences through `fast` as an AVX2 CPU, best of 15: 0.79-0.93x the time; docs/benchmarks.md) */
static inline __attribute__((always_inline)) void cell(int64_t H, float *restrict zi, float *restrict zf,
                                                        float *restrict zo, float *zg,
                                                        float *restrict zs, float *restrict c, float *restrict h,
                                                        const float *restrict k, float m, int kmode) {
    for (int64_t j = 0; j < H; j++) zi[j] = sigmoid(zi[j]);
    for (int64_t j = 0; j < H; j++) zf[j] = sigmoid(zf[j]);
    for (int64_t j = 0; j < H; j++) zo[j] = sigmoid(zo[j]);
    /* γ's row may be o's (three gate rows, kmode 1: tagger/runtime/scan.py), hence zg not restrict */
    if (kmode == 1 && zg != zi && zg != zf && zg != zo)
        for (int64_t j = 0; j < H; j++) zg[j] = sigmoid(zg[j]);
    for (int64_t j = 0; j < H; j++) zs[j] = tanh_(zs[j]);
    for (int64_t j = 0; j < H; j++) {
        float next = zf[j] * c[j] + zi[j] * zs[j];
        float out = zo[j] * tanh_(next);
        if (kmode == 1) out += zg[j] * k[j];
        if (kmode == 2) out += k[j];
        if (kmode == 3) out += zo[j] * k[j];
        c[j] = next * m;
        h[j] = out * m;
    }
}

CLONES
static void row(const Step *s, int64_t d, int64_t b, float *z) {
    const int64_t H = s->hidden, width = (s->nsig + 1) * H;
    const float *gx = s->gx ? s->gx + d * s->gx_d + b * s->gx_b : NULL;
    if (s->lowered) {
        const uint16_t *p = (const uint16_t *)s->prod + d * s->prod_d + b * s->prod_b;
        for (int64_t j = 0; j < width; j++) z[j] = bf16_to_float(p[j]) + (gx ? gx[j] : 0.0f);
    } else {
        const float *p = (const float *)s->prod + d * s->prod_d + b * s->prod_b;
        for (int64_t j = 0; j < width; j++) z[j] = p[j] + (gx ? gx[j] : 0.0f);
    }
    float *zi = z, *zf = z + H, *zo = z + 2 * H, *zg = z + (s->nsig - 1) * H, *zs = z + s->nsig * H;
    float *c = s->c + d * s->c_d + b * s->c_b;
    float *h = s->h + d * s->h_d + b * s->h_b;
    const float *k = s->k ? s->k + d * s->k_d + b * s->k_b : NULL;
    float m = s->masked_now ? s->mask[d * s->mask_d + b * s->mask_b] : 1.0f;
    switch (s->kmode) { /* one loop per shortcut form, each without branches, so that it vectorises */
    case 0: cell(H, zi, zf, zo, zg, zs, c, h, k, m, 0); break;
    case 1: cell(H, zi, zf, zo, zg, zs, c, h, k, m, 1); break;
    case 2: cell(H, zi, zf, zo, zg, zs, c, h, k, m, 2); break;
    default: cell(H, zi, zf, zo, zg, zs, c, h, k, m, 3); break;
    }
    if (s->hlow) {
        uint16_t *low = s->hlow + d * s->hlow_d + b * s->hlow_b;
        for (int64_t j = 0; j < H; j++) low[j] = float_to_bf16(h[j]);
    }
}

static PyObject *lstm_step(PyObject *self, PyObject *args) {
    Step s;
    unsigned long long prod, gx, c, h, hlow, k, mask;
    if (!PyArg_ParseTuple(args, "LLLLLLKLLKLLKLLKLLKLLKLLKLL", &s.batch, &s.hidden, &s.nsig, &s.lowered, &s.kmode,
                          &s.masked_now, &prod, &s.prod_d, &s.prod_b, &gx, &s.gx_d, &s.gx_b, &c, &s.c_d, &s.c_b,
                          &h, &s.h_d, &s.h_b, &hlow, &s.hlow_d, &s.hlow_b, &k, &s.k_d, &s.k_b, &mask, &s.mask_d,
                          &s.mask_b))
        return NULL;
    if (s.nsig < 3 || s.hidden <= 0 || s.hidden > 4096 || (s.kmode && !k) || (s.masked_now && !mask)) {
        PyErr_SetString(PyExc_ValueError, "lstm_step: bad arguments");
        return NULL;
    }
    s.prod = (const void *)(uintptr_t)prod;
    s.gx = (const float *)(uintptr_t)gx;
    s.c = (float *)(uintptr_t)c;
    s.h = (float *)(uintptr_t)h;
    s.hlow = (uint16_t *)(uintptr_t)hlow;
    s.k = (const float *)(uintptr_t)k;
    s.mask = (const float *)(uintptr_t)mask;
    float stack[5 * 1024];
    float *z = (s.nsig + 1) * s.hidden <= 5 * 1024 ? stack : PyMem_RawMalloc(sizeof(float) * (s.nsig + 1) * s.hidden);
    if (!z) return PyErr_NoMemory();
    Py_BEGIN_ALLOW_THREADS
    for (int64_t d = 0; d < 2; d++)
        for (int64_t b = 0; b < s.batch; b++) row(&s, d, b, z);
    Py_END_ALLOW_THREADS
    if (z != stack) PyMem_RawFree(z);
    Py_RETURN_NONE;
}

/* The first layer's input projection from per-word products (tagger/modules/input_layer.py,
 * InputLayer.gather_products, says what it computes): for each token and direction,
 * bias + Σ_j r_j · table[2j + direction][word in window slot j], r the window gates. */
CLONES
static void window_rows(int64_t steps, int64_t batch, int64_t width, int64_t window, const void *tables, int bf16,
                        int64_t table_stride, int64_t row_stride, const float *gate_in, int64_t gate_stride,
                        const float *gate_bias, const int64_t *types, const float *bias, int64_t bias_stride,
                        float *out) {
    const int64_t half = window / 2;
    int64_t slot[16];
    float r[16];
    for (int64_t t = 0; t < steps; t++) {
        for (int64_t b = 0; b < batch; b++) {
            for (int64_t j = 0; j < window; j++) {
                int64_t at = t + j - half;
                slot[j] = at >= 0 && at < steps ? types[at * batch + b] : 0;
            }
            for (int64_t k = 0; k < window; k++) {
                if (!gate_in) { r[k] = 1.0f; continue; }
                float sum = gate_bias[k];
                for (int64_t j = 0; j < window; j++) sum += gate_in[slot[j] * gate_stride + j * window + k];
                r[k] = sigmoid(sum);
            }
            for (int64_t direction = 0; direction < 2; direction++) {
                int64_t at = direction == 0 ? t : steps - 1 - t;
                float *restrict row = out + ((direction * steps + at) * batch + b) * width;
                const float *restrict start = bias + direction * bias_stride;
                for (int64_t g = 0; g < width; g++) row[g] = start[g];
                for (int64_t j = 0; j < window; j++) {
                    const float gate = r[j];
                    int64_t offset = (2 * j + direction) * table_stride + slot[j] * row_stride;
                    if (bf16) {
                        const uint16_t *restrict from = (const uint16_t *)tables + offset;
                        for (int64_t g = 0; g < width; g++) row[g] += gate * bf16_to_float(from[g]);
                    } else {
                        const float *restrict from = (const float *)tables + offset;
                        for (int64_t g = 0; g < width; g++) row[g] += gate * from[g];
                    }
                }
            }
        }
    }
}

static PyObject *window_sum(PyObject *self, PyObject *args) {
    int64_t steps, batch, width, window, table_stride, row_stride, gate_stride, bias_stride;
    int bf16;
    unsigned long long tables, gate_in, gate_bias, types, bias, out;
    if (!PyArg_ParseTuple(args, "LLLLKiLLKLKKKLK", &steps, &batch, &width, &window, &tables, &bf16, &table_stride,
                          &row_stride, &gate_in, &gate_stride, &gate_bias, &types, &bias, &bias_stride, &out))
        return NULL;
    if (window < 1 || window > 16 || !tables || !types || !bias || !out || (gate_in && !gate_bias)) {
        PyErr_SetString(PyExc_ValueError, "window_sum: bad arguments");
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    window_rows(steps, batch, width, window, (const void *)(uintptr_t)tables, bf16, table_stride, row_stride,
                (const float *)(uintptr_t)gate_in, gate_stride, (const float *)(uintptr_t)gate_bias,
                (const int64_t *)(uintptr_t)types, (const float *)(uintptr_t)bias, bias_stride, (float *)(uintptr_t)out);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

/* An input projection computed for both directions in one product [T·B, 2G] (recurrent.py,
 * _both_directions), laid out as the scan reads it: out[d, t, b] = bias[d] + product[t' B + b,
 * d G : (d + 1) G], t' = t forward and T - 1 - t backward; bf16 products widened on the way. */
CLONES
static void scan_rows(int64_t steps, int64_t batch, int64_t width, const void *product, int bf16, int64_t row_stride,
                      const float *bias, int64_t bias_stride, float *out) {
    for (int64_t d = 0; d < 2; d++)
        for (int64_t t = 0; t < steps; t++)
            for (int64_t b = 0; b < batch; b++) {
                int64_t source = (d == 0 ? t : steps - 1 - t) * batch + b;
                float *restrict row = out + ((d * steps + t) * batch + b) * width;
                const float *restrict add = bias ? bias + d * bias_stride : NULL;
                if (bf16) {
                    const uint16_t *restrict from = (const uint16_t *)product + source * row_stride + d * width;
                    if (add) for (int64_t g = 0; g < width; g++) row[g] = add[g] + bf16_to_float(from[g]);
                    else for (int64_t g = 0; g < width; g++) row[g] = bf16_to_float(from[g]);
                } else {
                    const float *restrict from = (const float *)product + source * row_stride + d * width;
                    if (add) for (int64_t g = 0; g < width; g++) row[g] = add[g] + from[g];
                    else for (int64_t g = 0; g < width; g++) row[g] = from[g];
                }
            }
}

static PyObject *scan_order(PyObject *self, PyObject *args) {
    int64_t steps, batch, width, row_stride, bias_stride;
    int bf16;
    unsigned long long product, bias, out;
    if (!PyArg_ParseTuple(args, "LLLKiLKLK", &steps, &batch, &width, &product, &bf16, &row_stride, &bias, &bias_stride,
                          &out))
        return NULL;
    if (!product || !out) {
        PyErr_SetString(PyExc_ValueError, "scan_order: bad arguments");
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    scan_rows(steps, batch, width, (const void *)(uintptr_t)product, bf16, row_stride, (const float *)(uintptr_t)bias,
              bias_stride, (float *)(uintptr_t)out);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}


/* ---------------------------------------------------------------------------------------------
 * float32 products and whole-layer scans for CPUs without native bf16 (tagger/runtime/kernels.py
 * wraps them; tagger/runtime/skip_lstm.py, products(), says when they are used): C = A · B with A
 * float32 rows and B packed once per model as panels of 16 columns (packing.pack_f32: panel nb
 * holds columns 16 nb .. 16 nb + 15 of every row k, element (k, n) at [n / 16][k][n % 16]), and
 * whole bidirectional LSTM layers scanned in one call, as the bf16 kernels below do. One source,
 * written with the compilers' vector types, built three ways: AVX2 with FMA and AVX-512 on x86
 * (chosen at run time by what the CPU has, f32_kernel()), and plain C that the compiler
 * vectorises for whatever it targets (SSE2, NEON on aarch64, or scalar code).
 * ------------------------------------------------------------------------------------------- */
#include <stdlib.h>

/* Where a product's result goes: out[m, c(n)] (+ bias[c(n)]; or added to what is there, `add`)
 * for rows m < rows, row stride ldc, where the product's columns come in blocks of `block` and
 * column n = q·block + j, j < count, lands at c(n) = q·stride + offset + j (one block: the
 * columns as they are; an upper layer's shortcut term: two blocks, one per direction, into the
 * g gates of each). `lowered`: out holds bf16, rounded to nearest even (bf16 kernels only). */
typedef struct {
    int add, lowered;
    float *out;
    int64_t rows, ldc;
    const float *bias;
    int64_t block, stride, offset, count;
} Sink;

/* Each thread's scratch for the whole-layer scans, kept from call to call: fresh megabytes from
 * the OS at every call, and given back after, kept two threads from running their scans side by side. */
static __thread void *scratch;
static __thread size_t scratch_bytes;

static void *thread_scratch(size_t bytes) {
    if (bytes > scratch_bytes) {
        free(scratch);
        scratch = malloc(bytes);
        scratch_bytes = scratch ? bytes : 0;
    }
    return scratch;
}

enum { F32_NONE = 0, F32_GENERIC = 1, F32_AVX2 = 2, F32_AVX512 = 3 };

typedef float v8 __attribute__((vector_size(32)));
typedef float v4 __attribute__((vector_size(16)));
#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi" /* v8 is never passed between functions that are not inlined */
#endif
#define INLINE static inline __attribute__((always_inline))

#if defined(__clang__)
#define UNROLL4 _Pragma("clang loop unroll_count(4)")
#elif defined(__GNUC__)
#define UNROLL4 _Pragma("GCC unroll 4")
#else
#define UNROLL4
#endif

/* blk [R × 16] = R rows of A, packed (ap[k·R + r]), · one panel of B (K rows of 16): 16/L
 * accumulators of L lanes a row (VT), each weight load used R times, A read in sequence */
#define F32_BLOCK(NAME, VT, L, R)                                                                   \
    INLINE void NAME(const float *restrict ap, const float *restrict b, int64_t K, float *blk) {     \
        VT acc[R][16 / L];                                                                          \
        for (int r = 0; r < R; r++)                                                                 \
            for (int v = 0; v < 16 / L; v++) acc[r][v] = (VT){0};                                   \
        UNROLL4 for (int64_t k = 0; k < K; k++) {                                                   \
            VT w[16 / L];                                                                           \
            for (int v = 0; v < 16 / L; v++) memcpy(&w[v], b + 16 * k + L * v, sizeof(VT));         \
            for (int r = 0; r < R; r++) {                                                           \
                const float x = ap[k * R + r];                                                      \
                for (int v = 0; v < 16 / L; v++) acc[r][v] += x * w[v];                             \
            }                                                                                       \
        }                                                                                           \
        for (int r = 0; r < R; r++)                                                                 \
            for (int v = 0; v < 16 / L; v++) memcpy(blk + 16 * r + L * v, &acc[r][v], sizeof(VT));  \
    }
F32_BLOCK(f32_block8x6, v8, 8, 6)
F32_BLOCK(f32_block8x12, v8, 8, 12)
F32_BLOCK(f32_block4x3, v4, 4, 3)
F32_BLOCK(f32_block4x6, v4, 4, 6)

INLINE void f32_block(const int lanes, const int R, const float *ap, const float *b, int64_t K, float *blk) {
    if (lanes == 8 && R == 12) f32_block8x12(ap, b, K, blk);
    else if (lanes == 8) f32_block8x6(ap, b, K, blk);
    else if (R == 6) f32_block4x6(ap, b, K, blk);
    else f32_block4x3(ap, b, K, blk);
}

/* Each thread's room for A packed, kept from call to call */
static __thread float *packed_rows;
static __thread size_t packed_bytes;

/* rows m0 … m0 + mrows - 1 of product columns n0 … n0 + 15 from blk (16 a row) into the sink */
INLINE void f32_sink(const Sink *s, int64_t m0, int64_t n0, const float *blk, int64_t mrows) {
    const int64_t q = n0 / s->block, j0 = n0 - q * s->block;
    int64_t valid = s->count - j0;
    if (valid <= 0) return;
    if (valid > 16) valid = 16;
    const int64_t col = q * s->stride + s->offset + j0;
    if (m0 + mrows > s->rows) mrows = s->rows - m0;
    if (valid == 16) { /* the usual case, in loops of a known length that vectorise whole */
        const float *bias = s->bias ? s->bias + col : NULL;
        for (int64_t r = 0; r < mrows; r++) {
            float *restrict to = s->out + (m0 + r) * s->ldc + col;
            const float *restrict from = blk + 16 * r;
            if (s->add) for (int j = 0; j < 16; j++) to[j] += from[j];
            else if (bias) for (int j = 0; j < 16; j++) to[j] = from[j] + bias[j];
            else memcpy(to, from, 16 * sizeof(float));
        }
        return;
    }
    for (int64_t r = 0; r < mrows; r++) {
        float *restrict to = s->out + (m0 + r) * s->ldc + col;
        const float *restrict from = blk + 16 * r;
        if (s->add) for (int64_t j = 0; j < valid; j++) to[j] += from[j];
        else if (s->bias) for (int64_t j = 0; j < valid; j++) to[j] = from[j] + s->bias[col + j];
        else for (int64_t j = 0; j < valid; j++) to[j] = from[j];
    }
}

/* A [m rows, lda floats] · B (nb panels of K rows) into the sink, the GotoBLAS way: F32_ROWS rows
 * of A at a time packed (blocks of rmax rows, each k's rmax values together, the last block padded
 * with zeros) and kept in L2, against each panel of B in turn (kept in L1), rmax rows at a time
 * (rmax: the accumulators the vector registers hold). -1 without the memory to pack. */
#define F32_ROWS 96
INLINE int f32_gemm_body(const int lanes, const int rmax, int64_t m, int64_t nb, int64_t K, const float *a,
                         int64_t lda, const float *b, const Sink *sink) {
    float blk[12 * 16];
    const size_t need = sizeof(float) * (size_t)(F32_ROWS + 12) * (size_t)K;
    if (need > packed_bytes) {
        free(packed_rows);
        packed_rows = malloc(need);
        packed_bytes = packed_rows ? need : 0;
        if (!packed_rows) return -1;
    }
    float *ap = packed_rows;
    for (int64_t start = 0; start < m; start += F32_ROWS) {
        const int64_t rows = m - start < F32_ROWS ? m - start : F32_ROWS, blocks = (rows + rmax - 1) / rmax;
        for (int64_t q = 0; q < blocks; q++)
            for (int r = 0; r < rmax; r++) {
                float *to = ap + q * K * rmax + r;
                const int64_t row = q * rmax + r;
                if (row < rows) {
                    const float *from = a + (start + row) * lda;
                    for (int64_t k = 0; k < K; k++) to[k * rmax] = from[k];
                } else for (int64_t k = 0; k < K; k++) to[k * rmax] = 0.0f;
            }
        for (int64_t j = 0; j < nb; j++)
            for (int64_t q = 0; q < blocks; q++) {
                f32_block(lanes, rmax, ap + q * K * rmax, b + j * K * 16, K, blk);
                const int64_t left = rows - q * rmax;
                f32_sink(sink, start + q * rmax, 16 * j, blk, left < rmax ? left : rmax);
            }
    }
    return 0;
}

/* One bidirectional LSTM layer, every time step, in one call, float32 throughout (the arithmetic
 * of lstm_step, with the recurrent product h_{t-1} · W_h by the gemm above): gx the input
 * projections, in scan order ([2, T, B, G], direction 1 reversed in time: `sentence` 0) or in
 * sentence order (rows t·B + b of ldg floats, direction d's G columns from d·gdir: `sentence` 1);
 * w both directions' W_h packed ([2][gp / 16][H][16]), k [T, 2, B, H] the shortcut or NULL, mask
 * [P, 2, B] or NULL; writes out [T, 2, B, H] (if not NULL) and xs: the outputs in sentence order,
 * rows t·B + b, direction d at columns dH .. dH + H - 1 (the next product's input, row stride ldx). */
typedef struct {
    int which, sentence;
    int64_t steps, batch, hidden, nsig, kmode, masked, gp, ldg, gdir;
    const float *gx, *w, *k, *mask;
    float *out, *xs;
    int64_t ldx;
    /* an upper layer's input product in the scan (x not NULL; then no gx), as ScanI8's: x the
     * layer below's outputs (rows t·B + b of ldxin floats) times W_x (wx, panels of kx rows,
     * direction d's from panel d·gp/16) plus biasx [2·gp]; with a shortcut (src not NULL, rows of
     * ldsrc) times U (wu, ku rows, direction d's ub columns from panel d·ub/16) into γ's block */
    const float *x, *src, *wx, *wu, *biasx;
    int64_t ldxin, kx, ldsrc, ku, ub;
} ScanF32;

/* one row's step: z (the recurrent product) + gx, then the cell; h written to the state, out and xs */
INLINE void f32_row(int64_t H, int64_t nsig, int kmode, float *restrict z, const float *restrict gx, float *c,
                    float *h, float *out, float *xs, const float *k, float m) {
    const int64_t G = (nsig + 1) * H;
    if (gx) for (int64_t j = 0; j < G; j++) z[j] += gx[j];
    if (kmode) cell(H, z, z + H, z + 2 * H, z + (nsig - 1) * H, z + nsig * H, c, h, k, m, 1);
    else cell(H, z, z + H, z + 2 * H, z + (nsig - 1) * H, z + nsig * H, c, h, k, m, 0);
    if (out) memcpy(out, h, sizeof(float) * H);
    memcpy(xs, h, sizeof(float) * H);
}

INLINE int f32_scan_body(const int lanes, const int rmax, const ScanF32 *s) {
    const int64_t T = s->steps, B = s->batch, H = s->hidden, G = (s->nsig + 1) * H, nb = s->gp / 16;
    const size_t hbytes = (size_t)(2 * B * H) * 4, zbytes = (size_t)(B * s->gp) * 4;
    char *space = thread_scratch(2 * hbytes + zbytes);
    if (!space) return -1;
    memset(space, 0, 2 * hbytes + zbytes); /* h_{-1} = 0, c_{-1} = 0, and the first step's product */
    float *h = (float *)space, *c = (float *)(space + hbytes), *z = (float *)(space + 2 * hbytes);
    /* the recurrent product writes z, or with the input product in the scan adds to it (as ScanI8's) */
    Sink sink = {s->x != NULL, 0, z, B, s->gp, NULL, s->gp, 0, 0, G};
    /* one direction after the other: only its W_h is read, and stays in L2 */
    for (int64_t d = 0; d < 2; d++) {
        for (int64_t t = 0; t < T; t++) {
            float *hd = h + d * B * H;
            const int64_t from = d == 0 ? t : T - 1 - t;
            if (s->x) {
                Sink in = {0, 0, z, B, s->gp, s->biasx + d * s->gp, s->gp, 0, 0, G};
                Sink u = {1, 0, z, B, s->gp, NULL, s->ub, 0, 3 * H, H}; /* γ's block */
                if (f32_gemm_body(lanes, rmax, B, nb, s->kx, s->x + from * B * s->ldxin, s->ldxin,
                                  s->wx + d * nb * s->kx * 16, &in) ||
                    (s->src && f32_gemm_body(lanes, rmax, B, s->ub / 16, s->ku, s->src + from * B * s->ldsrc, s->ldsrc,
                                             s->wu + d * (s->ub / 16) * s->ku * 16, &u)))
                    return -1;
            }
            if (t) {
                if (f32_gemm_body(lanes, rmax, B, nb, H, hd, H, s->w + d * nb * H * 16, &sink)) return -1;
            } else if (!s->x) memset(z, 0, zbytes); /* (the rows below add gx to z in place) */
            for (int64_t b = 0; b < B; b++) {
                const int64_t at = (t * 2 + d) * B + b;
                const float m = t < s->masked ? s->mask[at] : 1.0f;
                const float *gx = s->x ? NULL
                                  : s->sentence ? s->gx + (from * B + b) * s->ldg + d * s->gdir
                                                : s->gx + ((d * T + t) * B + b) * G;
                f32_row(H, s->nsig, (int)s->kmode, z + b * s->gp, gx, c + (d * B + b) * H, hd + b * H,
                        s->out ? s->out + at * H : NULL, s->xs + (from * B + b) * s->ldx + d * H,
                        s->kmode ? s->k + at * H : NULL, m);
            }
        }
    }
    return 0;
}

/* the instances: plain C with vectors of 4 (SSE2 on x86-64, NEON on aarch64, or what the compiler
 * makes of them elsewhere; 16 registers: 3 rows of 16 columns, 32 on aarch64: 6), and on x86 AVX2
 * with FMA (16 registers of 8: 6 rows) and AVX-512 (32 registers: 12 rows) */
#if defined(__aarch64__)
#define GENERIC_ROWS 6
#else
#define GENERIC_ROWS 3
#endif
static int f32_gemm_generic(int64_t m, int64_t nb, int64_t K, const float *a, int64_t lda, const float *b,
                            const Sink *sink) { return f32_gemm_body(4, GENERIC_ROWS, m, nb, K, a, lda, b, sink); }
static int f32_scan_generic(const ScanF32 *s) { return f32_scan_body(4, GENERIC_ROWS, s); }

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define HAVE_F32_X86 1
#define T_AVX2 __attribute__((target("avx2,fma")))
#define T_AVX512 __attribute__((target("avx512f,avx512vl,fma")))
T_AVX2 static int f32_gemm_avx2(int64_t m, int64_t nb, int64_t K, const float *a, int64_t lda, const float *b,
                                const Sink *sink) { return f32_gemm_body(8, 6, m, nb, K, a, lda, b, sink); }
T_AVX2 static int f32_scan_avx2(const ScanF32 *s) { return f32_scan_body(8, 6, s); }
T_AVX512 static int f32_gemm_avx512(int64_t m, int64_t nb, int64_t K, const float *a, int64_t lda,
                                    const float *b, const Sink *sink) { return f32_gemm_body(8, 12, m, nb, K, a, lda, b, sink); }
T_AVX512 static int f32_scan_avx512(const ScanF32 *s) { return f32_scan_body(8, 12, s); }
#endif

/* the best float32 kernel this CPU runs */
static int f32_best(void) {
#ifdef HAVE_F32_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) return F32_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return F32_AVX2;
#endif
    return F32_GENERIC;
}

static int f32_gemm(int which, int64_t m, int64_t nb, int64_t K, const float *a, int64_t lda, const float *b,
                    const Sink *sink) {
#ifdef HAVE_F32_X86
    if (which == F32_AVX512) return f32_gemm_avx512(m, nb, K, a, lda, b, sink);
    if (which == F32_AVX2) return f32_gemm_avx2(m, nb, K, a, lda, b, sink);
#endif
    return f32_gemm_generic(m, nb, K, a, lda, b, sink);
}

static PyObject *f32_kernel(PyObject *self, PyObject *args) { return PyLong_FromLong(f32_best()); }

/* f32_product(which, m, nb, K, a, lda, b, add, out, rows, ldc, bias, block, stride, offset, count):
 * one product A [m rows, lda floats] · B (nb panels of K rows) into a sink (see Sink) */
static PyObject *f32_product(PyObject *self, PyObject *args) {
    int which;
    int64_t m, nb, K, lda;
    unsigned long long a, b, out, bias;
    Sink s;
    s.lowered = 0;
    if (!PyArg_ParseTuple(args, "iLLLKLKiKLLKLLLL", &which, &m, &nb, &K, &a, &lda, &b, &s.add, &out, &s.rows, &s.ldc,
                          &bias, &s.block, &s.stride, &s.offset, &s.count))
        return NULL;
    if (which < F32_GENERIC || which > f32_best() || !a || !b || !out || m < s.rows || m < 0 || nb <= 0 || K <= 0 ||
        lda < K || s.block <= 0 || s.block % 16 || s.count < 0 || s.count > s.block) {
        PyErr_SetString(PyExc_ValueError, "f32_product: bad arguments");
        return NULL;
    }
    s.out = (float *)(uintptr_t)out;
    s.bias = (const float *)(uintptr_t)bias;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = f32_gemm(which, m, nb, K, (const float *)(uintptr_t)a, lda, (const float *)(uintptr_t)b, &s);
    Py_END_ALLOW_THREADS
    if (status) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

/* f32_scan(which, steps, batch, hidden, nsig, kmode, masked, gp, gx, sentence, ldg, gdir, w, k, mask, out, xs,
 * ldx[, x, ldxin, kx, wx, biasx, src, ldsrc, ku, wu, ub]): one layer (see ScanF32; with x, gx 0) */
static PyObject *f32_scan(PyObject *self, PyObject *args) {
    ScanF32 s;
    unsigned long long gx, w, k, mask, out, xs, x = 0, wx = 0, biasx = 0, src = 0, wu = 0;
    s.ldxin = s.kx = s.ldsrc = s.ku = s.ub = 0;
    if (!PyArg_ParseTuple(args, "iLLLLLLLKiLLKKKKKL|KLLKKKLLKL", &s.which, &s.steps, &s.batch, &s.hidden, &s.nsig,
                          &s.kmode, &s.masked, &s.gp, &gx, &s.sentence, &s.ldg, &s.gdir, &w, &k, &mask, &out, &xs,
                          &s.ldx, &x, &s.ldxin, &s.kx, &wx, &biasx, &src, &s.ldsrc, &s.ku, &wu, &s.ub))
        return NULL;
    const int64_t G = (s.nsig + 1) * s.hidden;
    if (s.which < F32_GENERIC || s.which > f32_best() || s.nsig < 3 || s.hidden <= 0 || s.gp % 16 || s.gp < G ||
        !(gx || x) || !w || !xs || s.ldx < 2 * s.hidden || (s.kmode && !k) || (s.masked && !mask) || s.kmode < 0 ||
        s.kmode > 1 || s.steps <= 0 || s.batch <= 0 || (s.sentence && (s.gdir < G || s.ldg < s.gdir + G)) ||
        (x && (gx || !wx || !biasx || s.kx <= 0 || s.ldxin < s.kx)) ||
        (src && (!x || !wu || s.ku <= 0 || s.ldsrc < s.ku || s.ub % 16 || s.ub < s.hidden || s.nsig != 4))) {
        PyErr_SetString(PyExc_ValueError, "f32_scan: bad arguments");
        return NULL;
    }
    s.x = (const float *)(uintptr_t)x;
    s.wx = (const float *)(uintptr_t)wx;
    s.biasx = (const float *)(uintptr_t)biasx;
    s.src = (const float *)(uintptr_t)src;
    s.wu = (const float *)(uintptr_t)wu;
    s.gx = (const float *)(uintptr_t)gx;
    s.w = (const float *)(uintptr_t)w;
    s.k = (const float *)(uintptr_t)k;
    s.mask = (const float *)(uintptr_t)mask;
    s.out = (float *)(uintptr_t)out;
    s.xs = (float *)(uintptr_t)xs;
    int status;
    Py_BEGIN_ALLOW_THREADS
#ifdef HAVE_F32_X86
    if (s.which == F32_AVX512) status = f32_scan_avx512(&s);
    else if (s.which == F32_AVX2) status = f32_scan_avx2(&s);
    else
#endif
    status = f32_scan_generic(&s);
    Py_END_ALLOW_THREADS
    if (status) return PyErr_NoMemory();
    Py_RETURN_NONE;
}


/* ---------------------------------------------------------------------------------------------
 * int8 products for CPUs without native bf16 (issue 33; tagger/runtime/kernels.py wraps them):
 * the left side as 7-bit codes q = round(x·s) + 64 in 0 … 127 (bytes, rows of K, K a multiple of
 * 4; s the scale of what is multiplied, 63 over the bound of its values), the right side as
 * signed bytes, a scale per column, packed [N/16][K/4][16][4] (tagger/modules/packing.py,
 * pack_i8), int32 sums; column n of the product is (Σ_k q_k w_kn − corr[n])·deq[n], corr[n] =
 * 64·Σ_k w_kn, deq[n] = 1 / (s · the column's scale). AVX-VNNI's and AVX512-VNNI's vpdpbusd sum
 * four products into int32 exactly, the weights of 127 at most; AVX2's kernel takes weights of 63
 * at most (i8_weight_max), whose four products with codes sum to less than 2^15 in magnitude, so
 * that its vpmaddubsw never saturates and two of its pairs add in int16. All give the exact sums.
 * Whole LSTM layers as the float32 scan above, the state quantised after each step, the cell in
 * float32.
 * ------------------------------------------------------------------------------------------- */
enum { I8_NONE = 0, I8_AVX2 = 1, I8_VNNI = 2, I8_VNNI512 = 3 };
#define I8_MAX_ROWS 12 /* rows a block, at most */

typedef struct {
    const int32_t *corr;
    const float *deq;
    const float *rows; /* a factor per row of the product, or NULL (a left side of codes at a scale per row) */
} I8Cols;

typedef struct {
    int which, sentence;
    int64_t steps, batch, hidden, nsig, kmode, masked, gp, ldg, gdir;
    const float *gx, *k, *mask;
    const int8_t *w;
    I8Cols cols[2];
    float scale;
    float *out;
    uint8_t *xs;
    int64_t ldx;
    /* an upper layer's input product in the scan, one time step at a time (x not NULL; then no gx):
     * x the layer below's outputs' codes, rows t·B + b of ldxin bytes, times W_x (wx, both
     * directions' panels of kqx quads, direction d's gp columns from panel d·gp/16), plus biasx
     * [2·gp]; and, with a shortcut (src not NULL), the codes of the layer two below (rows of ldsrc)
     * times U (wu, direction d's ub columns from panel d·ub/16, kqu quads) added to the g gates */
    const uint8_t *x, *src;
    const int8_t *wx, *wu;
    const float *biasx;
    I8Cols colsx[2], colsu[2];
    int64_t ldxin, kqx, ldsrc, kqu, ub;
} ScanI8;

#ifdef HAVE_F32_X86
#include <cpuid.h>
#include <immintrin.h>
#if (defined(__clang__) && __clang_major__ >= 12) || (!defined(__clang__) && __GNUC__ >= 11)
#define HAVE_I8_VNNI 1
#define T_VNNI __attribute__((target("avx2,fma,avxvnni")))
#define T_VNNI512 __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vnni")))
#endif
/* rows m0 … of product columns n0 … n0 + 15 from the int32 sums blk (16 a row), dequantised */
INLINE void i8_sink(const Sink *s, const I8Cols *q, int64_t m0, int64_t n0, const int32_t *blk, int64_t mrows) {
    float f[I8_MAX_ROWS * 16];
    const int32_t *corr = q->corr + n0;
    const float *deq = q->deq + n0;
    if (q->rows)
        for (int64_t r = 0; r < mrows; r++) {
            const float by = q->rows[m0 + r];
            for (int j = 0; j < 16; j++) f[16 * r + j] = (float)(blk[16 * r + j] - corr[j]) * deq[j] * by;
        }
    else
        for (int64_t r = 0; r < mrows; r++)
            for (int j = 0; j < 16; j++) f[16 * r + j] = (float)(blk[16 * r + j] - corr[j]) * deq[j];
    f32_sink(s, m0, n0, f, mrows);
}

/* x's codes (see above) at scale s */
INLINE void i8_codes(int64_t n, const float *restrict x, float s, uint8_t *restrict q) {
    for (int64_t j = 0; j < n; j++) {
        float v = x[j] * s + 64.5f;
        v = v < 0.5f ? 0.5f : v > 127.5f ? 127.5f : v;
        q[j] = (uint8_t)(int32_t)v;
    }
}

static __thread uint32_t *i8_packed;
static __thread size_t i8_packed_bytes;

/* blk [R × 16] = R rows of A, packed (4 bytes of k a row, the rows side by side), · one panel of
 * B ([K/4][16][4] bytes), per 4 k and 8 columns: with AVX-VNNI one vpdpbusd (6 rows); AVX2's
 * (byte pairs to int16, two of them added, then widened to int32) and AVX512-VNNI's below */
typedef void (*I8Block)(const uint32_t *restrict ap, const int8_t *restrict b, int64_t kq, int32_t *blk);

#define I8_BLOCK(NAME, TARGET, R, MAC)                                                                     \
    TARGET static inline __attribute__((always_inline)) void NAME(const uint32_t *restrict ap, const int8_t *restrict b, \
                                                                int64_t kq, int32_t *blk) {                       \
        __m256i acc[R][2];                                                                                 \
        for (int r = 0; r < R; r++) acc[r][0] = acc[r][1] = _mm256_setzero_si256();                        \
        const __m256i ones = _mm256_set1_epi16(1);                                                         \
        (void)ones;                                                                                        \
        for (int64_t q = 0; q < kq; q++) {                                                                 \
            const __m256i w0 = _mm256_loadu_si256((const __m256i *)(b + 64 * q));                          \
            const __m256i w1 = _mm256_loadu_si256((const __m256i *)(b + 64 * q + 32));                     \
            for (int r = 0; r < R; r++) {                                                                  \
                const __m256i a = _mm256_set1_epi32((int)ap[q * R + r]);                                   \
                acc[r][0] = MAC(acc[r][0], a, w0);                                                         \
                acc[r][1] = MAC(acc[r][1], a, w1);                                                         \
            }                                                                                              \
        }                                                                                                  \
        for (int r = 0; r < R; r++) {                                                                      \
            _mm256_storeu_si256((__m256i *)(blk + 16 * r), acc[r][0]);                                     \
            _mm256_storeu_si256((__m256i *)(blk + 16 * r + 8), acc[r][1]);                                 \
        }                                                                                                  \
    }
/* AVX2: weights of at most 63 in magnitude (pack_i8's `top` 63), so that two vpmaddubsw's pairs,
 * four products of a 7-bit code and such a weight (|Σ| ≤ 4·127·63 < 2^15), add in int16 before one
 * vpmaddwd by ones widens them: per 8 k and 8 columns 2 + 1 products and 2 adds, not 4 + 2 */
#define I8_PAIR_ROWS 4
T_AVX2 static inline __attribute__((always_inline)) void i8_block_avx2(const uint32_t *restrict ap,
                                                                        const int8_t *restrict b, int64_t kq,
                                                                        int32_t *blk) {
    enum { R = I8_PAIR_ROWS };
    __m256i acc[R][2];
    const __m256i ones = _mm256_set1_epi16(1);
    int64_t q = kq & 1; /* an odd first 4 k alone, so that the loop below ends the function's work */
    for (int r = 0; r < R; r++) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
    if (q) {
        const __m256i w0 = _mm256_loadu_si256((const __m256i *)b), w1 = _mm256_loadu_si256((const __m256i *)(b + 32));
        for (int r = 0; r < R; r++) {
            const __m256i a = _mm256_set1_epi32((int)ap[r]);
            acc[r][0] = _mm256_madd_epi16(_mm256_maddubs_epi16(a, w0), ones);
            acc[r][1] = _mm256_madd_epi16(_mm256_maddubs_epi16(a, w1), ones);
        }
    }
    for (; q < kq; q += 2) {
        const __m256i w00 = _mm256_loadu_si256((const __m256i *)(b + 64 * q));
        const __m256i w01 = _mm256_loadu_si256((const __m256i *)(b + 64 * q + 32));
        const __m256i w10 = _mm256_loadu_si256((const __m256i *)(b + 64 * q + 64));
        const __m256i w11 = _mm256_loadu_si256((const __m256i *)(b + 64 * q + 96));
        for (int r = 0; r < R; r++) {
            const __m256i a0 = _mm256_set1_epi32((int)ap[q * R + r]);
            const __m256i a1 = _mm256_set1_epi32((int)ap[(q + 1) * R + r]);
            const __m256i s0 = _mm256_add_epi16(_mm256_maddubs_epi16(a0, w00), _mm256_maddubs_epi16(a1, w10));
            const __m256i s1 = _mm256_add_epi16(_mm256_maddubs_epi16(a0, w01), _mm256_maddubs_epi16(a1, w11));
            acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(s0, ones));
            acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(s1, ones));
        }
    }
    for (int r = 0; r < R; r++) {
        _mm256_storeu_si256((__m256i *)(blk + 16 * r), acc[r][0]);
        _mm256_storeu_si256((__m256i *)(blk + 16 * r + 8), acc[r][1]);
    }
}
#ifdef HAVE_I8_VNNI
#define I8_MAC_VNNI(acc, a, w) _mm256_dpbusd_avx_epi32(acc, a, w)
I8_BLOCK(i8_block_vnni, T_VNNI, 6, I8_MAC_VNNI)

/* AVX512-VNNI: one register a row holds the panel's 16 columns, one vpdpbusd per 4 k (12 rows) */
T_VNNI512 static inline __attribute__((always_inline)) void i8_block_vnni512(const uint32_t *restrict ap,
                                                                               const int8_t *restrict b, int64_t kq,
                                                                               int32_t *blk) {
    __m512i acc[12];
    for (int r = 0; r < 12; r++) acc[r] = _mm512_setzero_si512();
    for (int64_t q = 0; q < kq; q++) {
        const __m512i w = _mm512_loadu_si512((const void *)(b + 64 * q));
        for (int r = 0; r < 12; r++) acc[r] = _mm512_dpbusd_epi32(acc[r], _mm512_set1_epi32((int)ap[q * 12 + r]), w);
    }
    for (int r = 0; r < 12; r++) _mm512_storeu_si512((void *)(blk + 16 * r), acc[r]);
}
#endif

/* A [m rows of lda bytes, codes] · B (nb panels of kq·4 rows) into the sink, as f32_gemm_body:
 * F32_ROWS rows of A packed at a time, R rows a block, against each panel in turn. -1 without
 * the memory. (Inlined into each kernel's own function, where block is known.) */
INLINE int i8_gemm_body(I8Block block, const int R, int64_t m, int64_t nb, int64_t kq, const uint8_t *a, int64_t lda,
                        const int8_t *b, const I8Cols *cols, const Sink *sink) {
    int32_t blk[I8_MAX_ROWS * 16];
    const size_t need = sizeof(uint32_t) * (size_t)(F32_ROWS + R) * (size_t)kq;
    if (need > i8_packed_bytes) {
        free(i8_packed);
        i8_packed = malloc(need);
        i8_packed_bytes = i8_packed ? need : 0;
        if (!i8_packed) return -1;
    }
    uint32_t *ap = i8_packed;
    for (int64_t start = 0; start < m; start += F32_ROWS) {
        const int64_t rows = m - start < F32_ROWS ? m - start : F32_ROWS, blocks = (rows + R - 1) / R;
        for (int64_t q = 0; q < blocks; q++)
            for (int r = 0; r < R; r++) {
                uint32_t *to = ap + q * kq * R + r;
                const int64_t row = q * R + r;
                if (row < rows) {
                    const uint8_t *from = a + (start + row) * lda;
                    for (int64_t k = 0; k < kq; k++) memcpy(to + k * R, from + 4 * k, 4);
                } else for (int64_t k = 0; k < kq; k++) to[k * R] = 0x40404040u; /* code 64: zero */
            }
        for (int64_t j = 0; j < nb; j++)
            for (int64_t q = 0; q < blocks; q++) {
                block(ap + q * kq * R, b + j * kq * 64, kq, blk);
                const int64_t left = rows - q * R;
                i8_sink(sink, cols, start + q * R, 16 * j, blk, left < R ? left : R);
            }
    }
    return 0;
}

/* one bidirectional layer, as f32_scan_body, each step's product h_{t-1} · W_h from the state's
 * codes; xs gets the outputs' codes (the next products' left side), out (if not NULL) the floats */
INLINE int i8_scan_body(I8Block block, const int R, const ScanI8 *s) {
    const int64_t T = s->steps, B = s->batch, H = s->hidden, G = (s->nsig + 1) * H, nb = s->gp / 16;
    const size_t cbytes = (size_t)(B * H) * 4, zbytes = (size_t)(B * s->gp) * 4, hbytes = (size_t)H * 4;
    char *space = thread_scratch(cbytes + zbytes + hbytes + (size_t)(B * H));
    if (!space) return -1;
    float *c = (float *)space, *z = (float *)(space + cbytes), *h = (float *)(space + cbytes + zbytes);
    uint8_t *codes = (uint8_t *)(space + cbytes + zbytes + hbytes);
    /* the recurrent product writes z, or with the input product in the scan adds to it, after
     * x·W_x + bias and U's term (the order of the sums of the product by rows, then the scan) */
    Sink sink = {s->x != NULL, 0, z, B, s->gp, NULL, s->gp, 0, 0, G};
    for (int64_t d = 0; d < 2; d++) { /* one direction after the other: its W_h stays in L2 */
        memset(c, 0, cbytes);
        for (int64_t t = 0; t < T; t++) {
            const int64_t from = d == 0 ? t : T - 1 - t;
            if (s->x) {
                Sink in = {0, 0, z, B, s->gp, s->biasx + d * s->gp, s->gp, 0, 0, G};
                if (i8_gemm_body(block, R, B, nb, s->kqx, s->x + from * B * s->ldxin, s->ldxin,
                                 s->wx + d * nb * s->kqx * 64, &s->colsx[d], &in))
                    return -1;
                Sink u = {1, 0, z, B, s->gp, NULL, s->ub, 0, 3 * H, H}; /* γ's block */
                if (s->src && i8_gemm_body(block, R, B, s->ub / 16, s->kqu, s->src + from * B * s->ldsrc, s->ldsrc,
                                           s->wu + d * (s->ub / 16) * s->kqu * 64, &s->colsu[d], &u))
                    return -1;
            }
            if (t) {
                if (i8_gemm_body(block, R, B, nb, H / 4, codes, H, s->w + d * nb * H * 16, &s->cols[d], &sink))
                    return -1;
            } else if (!s->x) memset(z, 0, zbytes);
            for (int64_t b = 0; b < B; b++) {
                const int64_t at = (t * 2 + d) * B + b;
                const float m = t < s->masked ? s->mask[at] : 1.0f;
                float *zb = z + b * s->gp;
                if (!s->x) {
                    const float *gx = s->sentence ? s->gx + (from * B + b) * s->ldg + d * s->gdir
                                                  : s->gx + ((d * T + t) * B + b) * G;
                    for (int64_t j = 0; j < G; j++) zb[j] += gx[j];
                }
                const float *k = s->kmode ? s->k + at * H : NULL;
                if (s->kmode) cell(H, zb, zb + H, zb + 2 * H, zb + (s->nsig - 1) * H, zb + s->nsig * H, c + b * H, h, k, m, 1);
                else cell(H, zb, zb + H, zb + 2 * H, zb + (s->nsig - 1) * H, zb + s->nsig * H, c + b * H, h, k, m, 0);
                if (s->out) memcpy(s->out + at * H, h, sizeof(float) * H);
                i8_codes(H, h, s->scale, codes + b * H);
                memcpy(s->xs + (from * B + b) * s->ldx + d * H, codes + b * H, (size_t)H);
            }
        }
    }
    return 0;
}

/* each kernel's product and scan, compiled for its instructions */
T_AVX2 static int i8_gemm_avx2(int64_t m, int64_t nb, int64_t kq, const uint8_t *a, int64_t lda, const int8_t *b,
                               const I8Cols *cols, const Sink *sink) {
    return i8_gemm_body(i8_block_avx2, I8_PAIR_ROWS, m, nb, kq, a, lda, b, cols, sink);
}
T_AVX2 static int i8_scan_avx2(const ScanI8 *s) { return i8_scan_body(i8_block_avx2, I8_PAIR_ROWS, s); }
#ifdef HAVE_I8_VNNI
T_VNNI static int i8_gemm_vnni(int64_t m, int64_t nb, int64_t kq, const uint8_t *a, int64_t lda, const int8_t *b,
                               const I8Cols *cols, const Sink *sink) {
    return i8_gemm_body(i8_block_vnni, 6, m, nb, kq, a, lda, b, cols, sink);
}
T_VNNI static int i8_scan_vnni(const ScanI8 *s) { return i8_scan_body(i8_block_vnni, 6, s); }
T_VNNI512 static int i8_gemm_vnni512(int64_t m, int64_t nb, int64_t kq, const uint8_t *a, int64_t lda,
                                     const int8_t *b, const I8Cols *cols, const Sink *sink) {
    return i8_gemm_body(i8_block_vnni512, 12, m, nb, kq, a, lda, b, cols, sink);
}
T_VNNI512 static int i8_scan_vnni512(const ScanI8 *s) { return i8_scan_body(i8_block_vnni512, 12, s); }
#endif

static int i8_gemm(int which, int64_t m, int64_t nb, int64_t kq, const uint8_t *a, int64_t lda, const int8_t *b,
                   const I8Cols *cols, const Sink *sink) {
#ifdef HAVE_I8_VNNI
    if (which == I8_VNNI) return i8_gemm_vnni(m, nb, kq, a, lda, b, cols, sink);
    if (which == I8_VNNI512) return i8_gemm_vnni512(m, nb, kq, a, lda, b, cols, sink);
#endif
    return i8_gemm_avx2(m, nb, kq, a, lda, b, cols, sink);
}

static int i8_scan_layer(const ScanI8 *s) {
#ifdef HAVE_I8_VNNI
    if (s->which == I8_VNNI) return i8_scan_vnni(s);
    if (s->which == I8_VNNI512) return i8_scan_vnni512(s);
#endif
    return i8_scan_avx2(s);
}
#endif

/* whether this CPU runs int8 kernel `which`: AVX2; AVX-VNNI (CPUID leaf 7.1, EAX bit 4: Intel's
 * cores since Alder Lake); AVX512-VNNI (Intel's servers since Cascade Lake, AMD's since Zen 4).
 * None off x86-64 (not measured to pay there). */
static int i8_runs(int which) {
#ifdef HAVE_F32_X86
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2")) return 0;
    if (which == I8_AVX2) return 1;
#ifdef HAVE_I8_VNNI
    unsigned int eax, ebx, ecx, edx;
    if (which == I8_VNNI) return __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) && (eax & (1u << 4));
    if (which == I8_VNNI512)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vnni");
#endif
#endif
    (void)which;
    return 0;
}

/* the best int8 kernel this CPU runs (the widest) */
static int i8_best(void) {
    for (int which = I8_VNNI512; which > I8_NONE; which--)
        if (i8_runs(which)) return which;
    return I8_NONE;
}

static PyObject *i8_kernel_runs(PyObject *self, PyObject *args) {
    int which;
    if (!PyArg_ParseTuple(args, "i", &which)) return NULL;
    return PyBool_FromLong(i8_runs(which));
}

static PyObject *i8_kernel(PyObject *self, PyObject *args) { return PyLong_FromLong(i8_best()); }

/* the largest weight magnitude int8 kernel `which` takes (see above) */
static PyObject *i8_weight_max(PyObject *self, PyObject *args) {
    int which;
    if (!PyArg_ParseTuple(args, "i", &which)) return NULL;
    return PyLong_FromLong(which == I8_AVX2 ? 63 : 127);
}

/* i8_product(which, m, nb, kq, a, lda, b, corr, deq, by_row, add, out, rows, ldc, bias, block, stride, offset,
 * count): A [m rows of lda bytes] · B (nb panels of 4·kq rows) into a sink (see Sink), each row's
 * sums times by_row[row] too if it is not 0 */
static PyObject *i8_product(PyObject *self, PyObject *args) {
    int which;
    int64_t m, nb, kq, lda;
    unsigned long long a, b, corr, deq, by_row, out, bias;
    Sink s;
    s.lowered = 0;
    if (!PyArg_ParseTuple(args, "iLLLKLKKKKiKLLKLLLL", &which, &m, &nb, &kq, &a, &lda, &b, &corr, &deq, &by_row, &s.add,
                          &out, &s.rows, &s.ldc, &bias, &s.block, &s.stride, &s.offset, &s.count))
        return NULL;
    if (!i8_runs(which) || !a || !b || !corr || !deq || !out || m < s.rows || m < 0 ||
        nb <= 0 || kq <= 0 || lda < 4 * kq || s.block <= 0 || s.block % 16 || s.count < 0 || s.count > s.block) {
        PyErr_SetString(PyExc_ValueError, "i8_product: bad arguments");
        return NULL;
    }
    s.out = (float *)(uintptr_t)out;
    s.bias = (const float *)(uintptr_t)bias;
    int status = -1;
#ifdef HAVE_F32_X86
    const I8Cols cols = {(const int32_t *)(uintptr_t)corr, (const float *)(uintptr_t)deq,
                         (const float *)(uintptr_t)by_row};
    Py_BEGIN_ALLOW_THREADS
    status = i8_gemm(which, m, nb, kq, (const uint8_t *)(uintptr_t)a, lda, (const int8_t *)(uintptr_t)b, &cols, &s);
    Py_END_ALLOW_THREADS
#endif
    if (status) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

/* i8_scan(which, steps, batch, hidden, nsig, kmode, masked, gp, gx, sentence, ldg, gdir, w, corr, deq, scale,
 * k, mask, out, xs, ldx[, x, ldxin, kqx, wx, corrx, deqx, biasx, src, ldsrc, kqu, wu, corru, dequ, ub]): as
 * f32_scan, W_h packed by pack_i8 (both directions, corr and deq [2·gp]); with x (gx then 0), an upper
 * layer's input product and shortcut term in the scan (see ScanI8; corrx, deqx, biasx [2·gp], corru
 * and dequ [2·ub]) */
static PyObject *i8_scan(PyObject *self, PyObject *args) {
    ScanI8 s;
    unsigned long long gx, w, corr, deq, k, mask, out, xs, x = 0, wx = 0, corrx = 0, deqx = 0, biasx = 0, src = 0,
                                                              wu = 0, corru = 0, dequ = 0;
    s.ldxin = s.kqx = s.ldsrc = s.kqu = s.ub = 0;
    if (!PyArg_ParseTuple(args, "iLLLLLLLKiLLKKKfKKKKL|KLLKKKKKLLKKKL", &s.which, &s.steps, &s.batch, &s.hidden,
                          &s.nsig, &s.kmode, &s.masked, &s.gp, &gx, &s.sentence, &s.ldg, &s.gdir, &w, &corr, &deq,
                          &s.scale, &k, &mask, &out, &xs, &s.ldx, &x, &s.ldxin, &s.kqx, &wx, &corrx, &deqx, &biasx,
                          &src, &s.ldsrc, &s.kqu, &wu, &corru, &dequ, &s.ub))
        return NULL;
    const int64_t G = (s.nsig + 1) * s.hidden;
    if (!i8_runs(s.which) || s.nsig < 3 || s.hidden <= 0 || s.hidden % 4 || s.gp % 16 ||
        s.gp < G || !(gx || x) || !w || !corr || !deq || !xs || s.ldx < 2 * s.hidden || (s.kmode && !k) ||
        (s.masked && !mask) || s.kmode < 0 || s.kmode > 1 || s.steps <= 0 || s.batch <= 0 || !(s.scale > 0) ||
        (s.sentence && (s.gdir < G || s.ldg < s.gdir + G)) ||
        (x && (gx || !wx || !corrx || !deqx || !biasx || s.kqx <= 0 || s.ldxin < 4 * s.kqx)) ||
        (src && (!x || !wu || !corru || !dequ || s.kqu <= 0 || s.ldsrc < 4 * s.kqu || s.ub % 16 || s.ub < s.hidden ||
                 s.nsig != 4))) {
        PyErr_SetString(PyExc_ValueError, "i8_scan: bad arguments");
        return NULL;
    }
    s.x = (const uint8_t *)(uintptr_t)x;
    s.wx = (const int8_t *)(uintptr_t)wx;
    s.biasx = (const float *)(uintptr_t)biasx;
    s.src = (const uint8_t *)(uintptr_t)src;
    s.wu = (const int8_t *)(uintptr_t)wu;
    for (int d = 0; d < 2; d++) {
        s.colsx[d].corr = (const int32_t *)(uintptr_t)corrx + d * s.gp;
        s.colsx[d].deq = (const float *)(uintptr_t)deqx + d * s.gp;
        s.colsu[d].corr = (const int32_t *)(uintptr_t)corru + d * s.ub;
        s.colsu[d].deq = (const float *)(uintptr_t)dequ + d * s.ub;
        s.colsx[d].rows = s.colsu[d].rows = NULL;
    }
    s.gx = (const float *)(uintptr_t)gx;
    s.w = (const int8_t *)(uintptr_t)w;
    for (int d = 0; d < 2; d++) {
        s.cols[d].corr = (const int32_t *)(uintptr_t)corr + d * s.gp;
        s.cols[d].deq = (const float *)(uintptr_t)deq + d * s.gp;
        s.cols[d].rows = NULL;
    }
    s.k = (const float *)(uintptr_t)k;
    s.mask = (const float *)(uintptr_t)mask;
    s.out = (float *)(uintptr_t)out;
    s.xs = (uint8_t *)(uintptr_t)xs;
    int status = -1;
#ifdef HAVE_F32_X86
    Py_BEGIN_ALLOW_THREADS
    status = i8_scan_layer(&s);
    Py_END_ALLOW_THREADS
#endif
    if (status) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

/* ---------------------------------------------------------------------------------------------
 * bf16 products of our own for the torch-free tagger (tagger/runtime/bf16.py wraps them;
 * tagger/runtime/skip_lstm.py, products(), says when they are used): C = A · B with A [M, K] bf16
 * rows, B packed once per model as 16 × 32 tiles of bf16 pairs (bf16.pack: tile (nb, kb) holds
 * rows k = 32 kb .. 32 kb + 31 and columns n = 16 nb .. 16 nb + 15, element (k, n) at
 * [(k % 32) / 2][2 (n % 16) + k % 2]), fp32 accumulation, and whole bidirectional LSTM layers
 * scanned in one call: no Python and no library call per time step. Two kernels for the same
 * layout: AMX tiles (Sapphire Rapids and later) and AVX512-BF16 dot products (Cooper Lake,
 * Zen 4); bf16_kernel() says which this CPU and OS run, tagger.modules.fused which is used.
 * ------------------------------------------------------------------------------------------- */
#if defined(__GNUC__) && defined(__x86_64__) && defined(__linux__) && !defined(TAGGER_NO_BF16_KERNELS) && \
    ((defined(__clang__) && __clang_major__ >= 12) || (!defined(__clang__) && __GNUC__ >= 11))
#define HAVE_BF16_KERNELS 1
#include <cpuid.h>
#include <immintrin.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { KERNEL_NONE = 0, KERNEL_DPBF16 = 1, KERNEL_AMX = 2 };

static uint64_t xcr0(void) {
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

/* The best kernel this CPU and OS run: AMX needs the OS to save tile state and to grant this
 * process its use (arch_prctl ARCH_REQ_XCOMP_PERM, Linux 5.16+); both need the zmm state saved. */
static int best_kernel(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return KERNEL_NONE; /* OSXSAVE */
    uint64_t x = xcr0();
    if ((x & 0xE6) != 0xE6) return KERNEL_NONE; /* SSE, AVX, opmask, zmm state */
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return KERNEL_NONE;
    const int avx512 = (b & (1u << 16)) && (b & (1u << 17)) && (b & (1u << 30)) && (b & (1u << 31)); /* F DQ BW VL */
    const int amx = (d & (1u << 22)) && (d & (1u << 24)); /* AMX-BF16, AMX-TILE */
    unsigned a1 = 0, b1, c1, d1;
    __get_cpuid_count(7, 1, &a1, &b1, &c1, &d1);
    const int dpbf16 = avx512 && (a1 & (1u << 5));
    if (dpbf16 && amx && (x & (3u << 17)) == (3u << 17) && syscall(SYS_arch_prctl, 0x1023, 18) == 0) return KERNEL_AMX;
    return dpbf16 ? KERNEL_DPBF16 : KERNEL_NONE;
}

static int kernel_cached = -1;

static int kernel(void) {
    if (kernel_cached < 0) kernel_cached = best_kernel();
    return kernel_cached;
}


/* rows m0 … m0 + mrows - 1 of product columns n0 … n0 + 15 (a block never splits them), from blk
 * (row stride ld) into the sink */
__attribute__((target("avx512f,avx512bw,avx512vl")))
static void sink_rows(const Sink *s, int64_t m0, int64_t n0, const float *blk, int64_t ld, int64_t mrows) {
    const int64_t q = n0 / s->block, j0 = n0 - q * s->block;
    int64_t valid = s->count - j0;
    if (valid <= 0) return;
    if (valid > 16) valid = 16;
    const int64_t col = q * s->stride + s->offset + j0;
    const __mmask16 keep = (__mmask16)((1u << valid) - 1u);
    const __m512 bias = s->bias ? _mm512_maskz_loadu_ps(keep, s->bias + col) : _mm512_setzero_ps();
    if (m0 + mrows > s->rows) mrows = s->rows - m0;
    for (int64_t r = 0; r < mrows; r++) {
        const __m512 v = _mm512_add_ps(_mm512_loadu_ps(blk + r * ld), bias);
        if (s->lowered) {
            __m512i bits = _mm512_castps_si512(v);
            const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
            bits = _mm512_srli_epi32(_mm512_add_epi32(bits, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7FFF))), 16);
            _mm256_mask_storeu_epi16((uint16_t *)s->out + (m0 + r) * s->ldc + col, keep, _mm512_cvtepi32_epi16(bits));
        } else {
            float *to = s->out + (m0 + r) * s->ldc + col;
            _mm512_mask_storeu_ps(to, keep, s->add ? _mm512_add_ps(v, _mm512_maskz_loadu_ps(keep, to)) : v);
        }
    }
}

#define AMX __attribute__((target("amx-tile,amx-bf16,avx512f")))

typedef struct __attribute__((aligned(64))) {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} TileConfig;

AMX static void amx_start(void) {
    TileConfig config;
    memset(&config, 0, sizeof config);
    config.palette = 1;
    for (int i = 0; i < 8; i++) {
        config.rows[i] = 16;
        config.colsb[i] = 64;
    }
    /* not _tile_loadconfig: GCC's tells the compiler it reads 8 bytes, and the stores above go */
    __asm__ volatile("ldtilecfg %0" ::"m"(config));
}

AMX static void amx_end(void) { _tile_release(); }

/* out[32 × 32] (ld 32) = A[32 rows from a, lda bytes] · the 2 column blocks at b0, b1 (kb tiles each) */
AMX static void amx_block22(const uint16_t *a, int64_t lda, const uint16_t *b0, const uint16_t *b1, int64_t kb,
                            float *out) {
    _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
    const char *a1 = (const char *)a + 16 * lda;
    for (int64_t k = 0; k < kb; k++) {
        _tile_loadd(4, a + 32 * k, lda);
        _tile_loadd(5, a1 + 64 * k, lda);
        _tile_loadd(6, b0 + 512 * k, 64);
        _tile_loadd(7, b1 + 512 * k, 64);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    _tile_stored(0, out, 128); _tile_stored(1, out + 16, 128);
    _tile_stored(2, out + 512, 128); _tile_stored(3, out + 528, 128);
}

AMX static void amx_block12(const uint16_t *a, int64_t lda, const uint16_t *b0, const uint16_t *b1, int64_t kb,
                            float *out) {
    _tile_zero(0); _tile_zero(1);
    for (int64_t k = 0; k < kb; k++) {
        _tile_loadd(4, a + 32 * k, lda);
        _tile_loadd(6, b0 + 512 * k, 64);
        _tile_loadd(7, b1 + 512 * k, 64);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
    }
    _tile_stored(0, out, 128); _tile_stored(1, out + 16, 128);
}

AMX static void amx_block21(const uint16_t *a, int64_t lda, const uint16_t *b0, int64_t kb, float *out) {
    _tile_zero(0); _tile_zero(2);
    const char *a1 = (const char *)a + 16 * lda;
    for (int64_t k = 0; k < kb; k++) {
        _tile_loadd(4, a + 32 * k, lda);
        _tile_loadd(5, a1 + 64 * k, lda);
        _tile_loadd(6, b0 + 512 * k, 64);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(2, 5, 6);
    }
    _tile_stored(0, out, 128); _tile_stored(2, out + 512, 128);
}

AMX static void amx_block11(const uint16_t *a, int64_t lda, const uint16_t *b0, int64_t kb, float *out) {
    _tile_zero(0);
    for (int64_t k = 0; k < kb; k++) {
        _tile_loadd(4, a + 32 * k, lda);
        _tile_loadd(6, b0 + 512 * k, 64);
        _tile_dpbf16ps(0, 4, 6);
    }
    _tile_stored(0, out, 128);
}

/* A [m rows (a multiple of 16), lda bytes] · B packed [nb][kb] → the sink, 32 × 32 blocks at a
 * time, `chunk` rows of A against each pair of column blocks in turn (on EWT train, one thread:
 * the input products 0.67 s with 128-row chunks, 0.56 s with 32; the recurrent ones, fewer rows
 * against a matrix that stays in L2, no better with 32 than 128) */
#define INPUT_ROWS 32
#define RECURRENT_ROWS 128
AMX static void amx_gemm(int64_t m, int64_t nb, int64_t kb, const uint16_t *a, int64_t lda, const uint16_t *b,
                         const Sink *sink, int64_t chunk) {
    float blk[32 * 32] __attribute__((aligned(64)));
    for (int64_t start = 0; start < m; start += chunk) {
        const int64_t stop = start + chunk < m ? start + chunk : m;
        for (int64_t j = 0; j < nb; j += 2) {
            const uint16_t *b0 = b + j * kb * 512, *b1 = b0 + kb * 512;
            for (int64_t i = start; i < stop; i += 32) {
                const int two = i + 32 <= stop;
                const uint16_t *ai = (const uint16_t *)((const char *)a + i * lda);
                if (j + 1 < nb) {
                    if (two) amx_block22(ai, lda, b0, b1, kb, blk);
                    else amx_block12(ai, lda, b0, b1, kb, blk);
                    sink_rows(sink, i, 16 * j, blk, 32, two ? 32 : 16);
                    sink_rows(sink, i, 16 * j + 16, blk + 16, 32, two ? 32 : 16);
                } else {
                    if (two) amx_block21(ai, lda, b0, kb, blk);
                    else amx_block11(ai, lda, b0, kb, blk);
                    sink_rows(sink, i, 16 * j, blk, 32, two ? 32 : 16);
                }
            }
        }
    }
}

#define DPBF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

/* The same product by AVX512-BF16 dot products: R ≤ 8 rows × 32 columns of accumulators (16
 * registers), each weight load used R times; R a constant where inlined */
DPBF16 static inline __attribute__((always_inline)) void dp_block(const int R, const char *a, int64_t lda,
                                                                 const uint16_t *b0, const uint16_t *b1, int64_t kb,
                                                                 float *blk) {
    __m512 acc0[8], acc1[8];
    for (int r = 0; r < R; r++) acc0[r] = acc1[r] = _mm512_setzero_ps();
    for (int64_t k = 0; k < kb; k++) {
        for (int p = 0; p < 16; p++) {
            const __m512bh w0 = (__m512bh)_mm512_loadu_si512(b0 + 512 * k + 32 * p);
            const __m512bh w1 = (__m512bh)_mm512_loadu_si512(b1 + 512 * k + 32 * p);
            for (int r = 0; r < R; r++) {
                int32_t pairbits;
                memcpy(&pairbits, a + r * lda + 64 * k + 4 * p, 4);
                const __m512bh x = (__m512bh)_mm512_set1_epi32(pairbits);
                acc0[r] = _mm512_dpbf16_ps(acc0[r], x, w0);
                acc1[r] = _mm512_dpbf16_ps(acc1[r], x, w1);
            }
        }
    }
    for (int r = 0; r < R; r++) {
        _mm512_store_ps(blk + 32 * r, acc0[r]);
        _mm512_store_ps(blk + 32 * r + 16, acc1[r]);
    }
}

DPBF16 static void dp_gemm(int64_t m, int64_t nb, int64_t kb, const uint16_t *a, int64_t lda, const uint16_t *b,
                           const Sink *sink, int64_t chunk) {
    float blk[8 * 32] __attribute__((aligned(64)));
    for (int64_t start = 0; start < m; start += chunk) { /* as amx_gemm */
        const int64_t stop = start + chunk < m ? start + chunk : m;
        for (int64_t j = 0; j < nb; j += 2) {
            const uint16_t *b0 = b + j * kb * 512, *b1 = j + 1 < nb ? b0 + kb * 512 : b0;
            for (int64_t i = start; i < stop; i += 8) {
                const int64_t rows = stop - i < 8 ? stop - i : 8;
                const char *ai = (const char *)a + i * lda;
                switch (rows) {
                case 8: dp_block(8, ai, lda, b0, b1, kb, blk); break;
                case 7: dp_block(7, ai, lda, b0, b1, kb, blk); break;
                case 6: dp_block(6, ai, lda, b0, b1, kb, blk); break;
                case 5: dp_block(5, ai, lda, b0, b1, kb, blk); break;
                case 4: dp_block(4, ai, lda, b0, b1, kb, blk); break;
                case 3: dp_block(3, ai, lda, b0, b1, kb, blk); break;
                case 2: dp_block(2, ai, lda, b0, b1, kb, blk); break;
                default: dp_block(1, ai, lda, b0, b1, kb, blk); break;
                }
                sink_rows(sink, i, 16 * j, blk, 32, rows);
                if (j + 1 < nb) sink_rows(sink, i, 16 * j + 16, blk + 16, 32, rows);
            }
        }
    }
}

static void gemm(int which, int64_t m, int64_t nb, int64_t kb, const uint16_t *a, int64_t lda, const uint16_t *b,
                 const Sink *sink, int64_t chunk) {
    if (which == KERNEL_AMX) amx_gemm(m, nb, kb, a, lda, b, sink, chunk);
    else dp_gemm(m, nb, kb, a, lda, b, sink, chunk);
}


/* bf16_gemm(which, m, nb, kb, a, lda, b, add, lowered, out, rows, ldc, bias, block, stride, offset,
 * count): one product A [m rows, lda bytes] · B (nb × kb packed tiles) into a sink (see Sink) */
static PyObject *bf16_gemm(PyObject *self, PyObject *args) {
    int which;
    int64_t m, nb, kb, lda;
    unsigned long long a, b, out, bias;
    Sink s;
    if (!PyArg_ParseTuple(args, "iLLLKLKiiKLLKLLLL", &which, &m, &nb, &kb, &a, &lda, &b, &s.add, &s.lowered, &out,
                          &s.rows, &s.ldc, &bias, &s.block, &s.stride, &s.offset, &s.count))
        return NULL;
    if ((which != KERNEL_AMX && which != KERNEL_DPBF16) || which > kernel() || !a || !b || !out || m % 16 ||
        m < s.rows || nb <= 0 || kb <= 0 || (s.lowered && s.add) || s.block <= 0 || s.block % 16 || s.count < 0 ||
        s.count > s.block) {
        PyErr_SetString(PyExc_ValueError, "bf16_gemm: bad arguments");
        return NULL;
    }
    s.out = (float *)(uintptr_t)out;
    s.bias = (const float *)(uintptr_t)bias;
    Py_BEGIN_ALLOW_THREADS
    if (which == KERNEL_AMX) amx_start();
    gemm(which, m, nb, kb, (const uint16_t *)(uintptr_t)a, lda, (const uint16_t *)(uintptr_t)b, &s, INPUT_ROWS);
    if (which == KERNEL_AMX) amx_end();
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

/* One bidirectional LSTM layer, every time step, in one call (the arithmetic of lstm_step, with
 * the recurrent product h_{t-1} · W_h in bf16 by gemm): gx the input projections, in scan order
 * ([2, T, B, G], direction 1 reversed in time: `sentence` 0) or in sentence order (rows t·B + b of
 * ldg floats, direction d's G columns from d·gdir: `sentence` 1); w [2] packed W_h [H, G],
 * k [T, 2, B, H] the shortcut or NULL, mask [P, 2, B] or NULL; writes out [T, 2, B, H] (fp32, if
 * not NULL) and xs: the outputs in sentence order as bf16 rows t·B + b, direction d at columns
 * dH .. dH + H - 1 (the next product's input, row stride ldx elements). */
typedef struct {
    int which, sentence;
    int64_t steps, batch, hidden, nsig, kmode, masked, hp, gp, ldg, gdir;
    const float *gx;
    const uint16_t *w;
    const float *k, *mask;
    float *out;
    uint16_t *xs;
    int64_t ldx;
} Scan;

#define V512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")))

/* 2^t = 2^n · 2^f, n = round(t), |f| ≤ 1/2, 2^f by its Taylor polynomial of degree 5 (relative
 * error below 3e-6); scalef makes any n safe (2^-200 is 0, 2^200 infinite) */
V512 static inline __m512 exp2_16(__m512 t) {
    const __m512 n = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 f = _mm512_sub_ps(t, n);
    __m512 p = _mm512_set1_ps(1.3333558146e-3f);
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(9.6181291076e-3f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(5.5504108665e-2f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(2.4022650696e-1f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(6.9314718056e-1f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(p, n);
}

/* σ(a x) = 1 / (1 + 2^(-a x log2 e)), the reciprocal by rcp14 (relative error below 2^-14, far
 * under the bf16 rounding of the h it makes): e^-x infinite gives 0, as it should */
V512 static inline __m512 sigmoid16(__m512 x, float a) {
    const __m512 e = exp2_16(_mm512_mul_ps(x, _mm512_set1_ps(-a * 1.44269504088896341f)));
    return _mm512_rcp14_ps(_mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

V512 static inline __m512 tanh16(__m512 x) { /* 2σ(2x) - 1 */
    return _mm512_fmsub_ps(_mm512_set1_ps(2.0f), sigmoid16(x, 2.0f), _mm512_set1_ps(1.0f));
}

/* One row's cell (cell() above, kmode 0 or 1) on z + gx, 16 cells at a time: c updated, h written
 * to out (if not NULL) and as bf16 to low and x */
V512 static void cell16(int64_t H, int64_t nsig, const float *z, const float *gx, float *c, float *out,
                        uint16_t *low, uint16_t *x, const float *k, float m) {
    const __m512 keep = _mm512_set1_ps(m);
    for (int64_t j = 0; j < H; j += 16) {
        const __mmask16 in = H - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (H - j)) - 1u);
#define PRE(block) _mm512_add_ps(_mm512_maskz_loadu_ps(in, z + (block) * H + j), _mm512_maskz_loadu_ps(in, gx + (block) * H + j))
        const __m512 i = sigmoid16(PRE(0), 1.0f), f = sigmoid16(PRE(1), 1.0f), o = sigmoid16(PRE(2), 1.0f);
        const __m512 g = tanh16(PRE(nsig));
        __m512 next = _mm512_fmadd_ps(f, _mm512_maskz_loadu_ps(in, c + j), _mm512_mul_ps(i, g));
        __m512 h = _mm512_mul_ps(o, tanh16(next));
        if (k) h = _mm512_fmadd_ps(sigmoid16(PRE(nsig - 1), 1.0f), _mm512_maskz_loadu_ps(in, k + j), h);
#undef PRE
        if (m != 1.0f) {
            next = _mm512_mul_ps(next, keep);
            h = _mm512_mul_ps(h, keep);
        }
        _mm512_mask_storeu_ps(c + j, in, next);
        if (out) _mm512_mask_storeu_ps(out + j, in, h);
        const __m256i bits = (__m256i)_mm512_cvtneps_pbh(h);
        _mm256_mask_storeu_epi16(low + j, in, bits);
        _mm256_mask_storeu_epi16(x + j, in, bits);
    }
}


V512 static int scan_layer(const Scan *s) {
    const int64_t T = s->steps, B = s->batch, H = s->hidden, G = (s->nsig + 1) * H;
    const int64_t rows = (B + 15) / 16 * 16, nb = s->gp / 16, kb = s->hp / 32;
    const size_t hbytes = (size_t)(2 * rows * s->hp) * 2, zbytes = (size_t)(rows * s->gp) * 4;
    char *space = thread_scratch(hbytes + zbytes + (size_t)(2 * B * H) * 4);
    if (!space) return -1;
    memset(space, 0, hbytes + zbytes + (size_t)(2 * B * H) * 4); /* h_{-1} = 0, c_{-1} = 0 */
    uint16_t *h = (uint16_t *)space;
    float *z = (float *)(space + hbytes), *c = (float *)(space + hbytes + zbytes);
    Sink sink = {0, 0, z, rows, s->gp, NULL, s->gp, 0, 0, G};
    if (s->which == KERNEL_AMX) amx_start();
    for (int64_t t = 0; t < T; t++) {
        for (int64_t d = 0; d < 2; d++) {
            uint16_t *hd = h + d * rows * s->hp;
            if (t) gemm(s->which, rows, nb, kb, hd, 2 * s->hp, s->w + d * nb * kb * 512, &sink, RECURRENT_ROWS);
            for (int64_t b = 0; b < B; b++) {
                const int64_t at = (t * 2 + d) * B + b;
                const float m = t < s->masked ? s->mask[at] : 1.0f;
                const float *gx = s->sentence ? s->gx + ((d == 0 ? t : T - 1 - t) * B + b) * s->ldg + d * s->gdir
                                              : s->gx + ((d * T + t) * B + b) * G;
                cell16(H, s->nsig, z + b * s->gp, gx, c + (d * B + b) * H,
                       s->out ? s->out + at * H : NULL, hd + b * s->hp,
                       s->xs + ((d == 0 ? t : T - 1 - t) * B + b) * s->ldx + d * H, s->kmode ? s->k + at * H : NULL, m);
            }
        }
    }
    if (s->which == KERNEL_AMX) amx_end();
    return 0;
}

static PyObject *bf16_scan(PyObject *self, PyObject *args) {
    Scan s;
    unsigned long long gx, w, k, mask, out, xs;
    if (!PyArg_ParseTuple(args, "iLLLLLLLLKiLLKKKKKL", &s.which, &s.steps, &s.batch, &s.hidden, &s.nsig, &s.kmode,
                          &s.masked, &s.hp, &s.gp, &gx, &s.sentence, &s.ldg, &s.gdir, &w, &k, &mask, &out, &xs,
                          &s.ldx))
        return NULL;
    const int64_t G = (s.nsig + 1) * s.hidden;
    if ((s.which != KERNEL_AMX && s.which != KERNEL_DPBF16) || s.which > kernel() || s.nsig < 3 || s.hidden <= 0 ||
        s.hp % 32 || s.hp < s.hidden || s.gp % 16 || s.gp < G || !gx || !w || !xs || s.ldx < 2 * s.hidden ||
        (s.kmode && !k) || (s.masked && !mask) || s.kmode < 0 || s.kmode > 1 || s.steps <= 0 || s.batch <= 0 ||
        (s.sentence && (s.gdir < G || s.ldg < s.gdir + G))) {
        PyErr_SetString(PyExc_ValueError, "bf16_scan: bad arguments");
        return NULL;
    }
    s.gx = (const float *)(uintptr_t)gx;
    s.w = (const uint16_t *)(uintptr_t)w;
    s.k = (const float *)(uintptr_t)k;
    s.mask = (const float *)(uintptr_t)mask;
    s.out = (float *)(uintptr_t)out;
    s.xs = (uint16_t *)(uintptr_t)xs;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = scan_layer(&s);
    Py_END_ALLOW_THREADS
    if (status) return PyErr_NoMemory();
    Py_RETURN_NONE;
}
#endif

/* Sums of table rows, the transition parser's hidden layer (runtime/parser.py, as torch's
 * embedding_bag): out[i] = Σ_j table[index[i·count + j]] over j in order, rows `width` floats; with
 * `relu`, max(·, 0) after. Every index is checked against `rows` first: 0 if one is out of range. */
CLONES
static void bag_rows(int64_t n, int64_t count, int64_t width, const float *table, const int64_t *index, int relu,
                     float *out) {
    for (int64_t i = 0; i < n; i++) {
        float *restrict row = out + i * width;
        const int64_t *at = index + i * count;
        const float *restrict first = table + at[0] * width;
        for (int64_t g = 0; g < width; g++) row[g] = first[g];
        for (int64_t j = 1; j < count; j++) {
            const float *restrict add = table + at[j] * width;
            for (int64_t g = 0; g < width; g++) row[g] += add[g];
        }
        if (relu)
            for (int64_t g = 0; g < width; g++) row[g] = row[g] > 0.0f ? row[g] : 0.0f;
    }
}

static PyObject *bag_sum(PyObject *self, PyObject *args) {
    int64_t n, count, width, rows;
    int relu;
    unsigned long long table, index, out;
    if (!PyArg_ParseTuple(args, "LLLLKKiK", &n, &count, &width, &rows, &table, &index, &relu, &out))
        return NULL;
    if (n < 0 || count < 1 || width < 1 || !table || !index || !out) {
        PyErr_SetString(PyExc_ValueError, "bag_sum: bad arguments");
        return NULL;
    }
    const int64_t *at = (const int64_t *)(uintptr_t)index;
    for (int64_t i = 0; i < n * count; i++)
        if (at[i] < 0 || at[i] >= rows) {
            PyErr_SetString(PyExc_ValueError, "bag_sum: an index outside the table");
            return NULL;
        }
    Py_BEGIN_ALLOW_THREADS
    bag_rows(n, count, width, (const float *)(uintptr_t)table, at, relu, (float *)(uintptr_t)out);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

/* Arc-standard greedy decoding's bookkeeping for a batch (runtime/parser.py; the rules of
 * tagger/transitions/arc_standard.py and the slots of features.py, which the tests hold it to).
 * A batch's states live in int64 arrays, one row per sentence, longest first: `stack` [B, W],
 * `counts` [B, 3] (stack depth, buffer front i, length n), `heads`, `labels` [B, W] (-1 unset)
 * and `children` [4, B, W + 1] (lc1, lc2, rc1, rc2; -1 none), W = the longest length + 2.
 * arc_features writes, for the first `active` sentences, the table rows the hidden layer sums
 * (k token rows, then 12 label rows: `index` [active, k + 12]) and the legality code of each;
 * arc_apply takes their actions. A sentence's position p is row 2 + (p - 1) B + column[j] of the
 * token table (0: empty slot, 1: ROOT), k rows each; label rows start at l0, 12 per label id. */
typedef struct {
    int64_t batch, width, *stack, *counts, *heads, *labels, *children;
} ArcStates;

static inline int64_t arc_child(const ArcStates *a, int64_t which, int64_t j, int64_t p) {
    return p < 0 ? -1 : a->children[(which * a->batch + j) * (a->width + 1) + p];
}

static void arc_slots(const ArcStates *a, int64_t j, int64_t *out) {
    const int64_t *stack = a->stack + j * a->width, depth = a->counts[3 * j], i = a->counts[3 * j + 1],
                  n = a->counts[3 * j + 2];
    int64_t s0 = stack[depth - 1], s1 = depth > 1 ? stack[depth - 2] : -1, s2 = depth > 2 ? stack[depth - 3] : -1;
    int64_t l0 = arc_child(a, 0, j, s0), r0 = arc_child(a, 2, j, s0), l1 = arc_child(a, 0, j, s1),
            r1 = arc_child(a, 2, j, s1);
    int64_t slots[18] = {s0, s1, s2, i <= n ? i : -1, i < n ? i + 1 : -1, i + 1 < n ? i + 2 : -1,
                         l0, r0, arc_child(a, 1, j, s0), arc_child(a, 3, j, s0), arc_child(a, 0, j, l0),
                         arc_child(a, 2, j, r0), l1, r1, arc_child(a, 1, j, s1), arc_child(a, 3, j, s1),
                         arc_child(a, 0, j, l1), arc_child(a, 2, j, r1)};
    memcpy(out, slots, sizeof(slots));
}

static int64_t arc_code(const ArcStates *a, int64_t j) {
    int64_t depth = a->counts[3 * j], i = a->counts[3 * j + 1], n = a->counts[3 * j + 2];
    if (i <= n) return depth <= 2 ? 1 : 7;
    return depth == 1 ? 0 : (depth == 2 ? 4 : 6);
}

static int arc_parse(PyObject *args, ArcStates *a, int64_t *active, PyObject **rest) {
    unsigned long long stack, counts, heads, labels, children;
    if (!PyArg_ParseTuple(args, "LLLKKKKKO", active, &a->batch, &a->width, &stack, &counts, &heads, &labels,
                          &children, rest))
        return 0;
    if (*active < 0 || *active > a->batch || a->width < 2 || !stack || !counts || !heads || !labels || !children) {
        PyErr_SetString(PyExc_ValueError, "arc states: bad arguments");
        return 0;
    }
    a->stack = (int64_t *)(uintptr_t)stack, a->counts = (int64_t *)(uintptr_t)counts;
    a->heads = (int64_t *)(uintptr_t)heads, a->labels = (int64_t *)(uintptr_t)labels;
    a->children = (int64_t *)(uintptr_t)children;
    return 1;
}

static PyObject *arc_features(PyObject *self, PyObject *args) {
    ArcStates a;
    int64_t active, k, l0, null_id, offset;
    unsigned long long column, index, codes;
    PyObject *rest;
    if (!arc_parse(args, &a, &active, &rest)) return NULL;
    if (!PyArg_ParseTuple(rest, "LLLLKKK", &k, &l0, &null_id, &offset, &column, &index, &codes)) return NULL;
    if (k < 1 || k > 18 || !column || !index || !codes) {
        PyErr_SetString(PyExc_ValueError, "arc_features: bad arguments");
        return NULL;
    }
    const int64_t *col = (const int64_t *)(uintptr_t)column;
    int64_t *out = (int64_t *)(uintptr_t)index, *code = (int64_t *)(uintptr_t)codes;
    for (int64_t j = 0; j < active; j++) {
        int64_t slots[18], *row = out + j * (k + 12);
        arc_slots(&a, j, slots);
        for (int64_t s = 0; s < k; s++) {
            int64_t p = slots[s];
            row[s] = (p < 0 ? 0 : p == 0 ? 1 : 2 + (p - 1) * a.batch + col[j]) * k + s;
        }
        for (int64_t c = 0; c < 12; c++) {
            int64_t p = slots[6 + c], label = p > 0 ? a.labels[j * a.width + p] : -1;
            row[k + c] = l0 + (label >= 0 ? label + offset : null_id) * 12 + c;
        }
        code[j] = arc_code(&a, j);
    }
    Py_RETURN_NONE;
}

static PyObject *arc_apply(PyObject *self, PyObject *args) {
    ArcStates a;
    int64_t active, n_actions;
    unsigned long long actions, masks, codes;
    PyObject *rest;
    if (!arc_parse(args, &a, &active, &rest)) return NULL;
    if (!PyArg_ParseTuple(rest, "KKKL", &actions, &masks, &codes, &n_actions)) return NULL;
    const int64_t *best = (const int64_t *)(uintptr_t)actions, *code = (const int64_t *)(uintptr_t)codes;
    const float *mask = (const float *)(uintptr_t)masks;
    for (int64_t j = 0; j < active; j++) {
        int64_t action = best[j], c = code[j];
        if (action < 0 || action >= n_actions || mask[c * n_actions + action] != 0.0f) {
            action = -1;  /* only reachable with NaN scores: the lowest legal action */
            for (int64_t x = 0; x < n_actions && action < 0; x++)
                if (mask[c * n_actions + x] == 0.0f) action = x;
            if (action < 0) {
                PyErr_SetString(PyExc_ValueError, "arc_apply: no legal action");
                return NULL;
            }
        }
        int64_t *stack = a.stack + j * a.width, *count = a.counts + 3 * j, depth = count[0];
        if (action == 0) {
            stack[depth] = count[1]++;
            count[0] = depth + 1;
            continue;
        }
        int64_t label = (action - 1) / 2, s0 = stack[depth - 1], s1 = stack[depth - 2], w = a.width + 1;
        int64_t *lc1 = a.children + j * w, *lc2 = lc1 + a.batch * w, *rc1 = lc2 + a.batch * w,
                *rc2 = rc1 + a.batch * w;
        if ((action - 1) % 2 == 0) {  /* LEFT-ARC: s0 -> s1, pop s1 */
            stack[depth - 2] = s0;
            a.heads[j * a.width + s1] = s0, a.labels[j * a.width + s1] = label;
            lc2[s0] = lc1[s0], lc1[s0] = s1;
        } else {  /* RIGHT-ARC: s1 -> s0, pop s0 */
            a.heads[j * a.width + s0] = s1, a.labels[j * a.width + s0] = label;
            rc2[s1] = rc1[s1], rc1[s1] = s0;
        }
        count[0] = depth - 1;
    }
    Py_RETURN_NONE;
}

/* window_labels(scores, steps, batch, ld, cols, out): the tokenizer's labels (runtime/c_tokenizer.py),
 * window by window: out[b * steps + t] (a byte) = the first column of the largest of the `cols`
 * scores in row t * batch + b (rows of `ld` floats), as numpy's argmax(-1).T gives them */
static PyObject *window_labels(PyObject *self, PyObject *args) {
    int64_t steps, batch, ld, cols;
    unsigned long long scores, out;
    if (!PyArg_ParseTuple(args, "KLLLLK", &scores, &steps, &batch, &ld, &cols, &out)) return NULL;
    if (!scores || !out || steps < 0 || batch < 0 || cols < 1 || cols > 256 || ld < cols) {
        PyErr_SetString(PyExc_ValueError, "window_labels: bad arguments");
        return NULL;
    }
    const float *s = (const float *)(uintptr_t)scores;
    unsigned char *o = (unsigned char *)(uintptr_t)out;
    for (int64_t t = 0; t < steps; t++)
        for (int64_t b = 0; b < batch; b++) {
            const float *row = s + (t * batch + b) * ld;
            int64_t best = 0;
            for (int64_t j = 1; j < cols; j++)
                if (row[j] > row[best]) best = j;
            o[b * steps + t] = (unsigned char)best;
        }
    Py_RETURN_NONE;
}

static PyObject *bf16_kernel(PyObject *self, PyObject *args) {
#ifdef HAVE_BF16_KERNELS
    return PyLong_FromLong(kernel());
#else
    return PyLong_FromLong(0);
#endif
}

static PyMethodDef methods[] = {
    {"scan_order", scan_order, METH_VARARGS, "Both directions' input projections in scan order (recurrent.py)."},
    {"lstm_step", lstm_step, METH_VARARGS, "One fused LSTM time step after the recurrent product (see recurrent.py)."},
    {"bf16_kernel", bf16_kernel, METH_NOARGS, "The bf16 product kernel this CPU runs: 0 none, 1 AVX512-BF16, 2 AMX."},
#ifdef HAVE_BF16_KERNELS
    {"bf16_gemm", bf16_gemm, METH_VARARGS, "A bf16 product with a packed right side into a sink (skip_lstm runtime)."},
    {"bf16_scan", bf16_scan, METH_VARARGS, "A whole bidirectional LSTM layer with bf16 recurrent products."},
#endif
    {"f32_kernel", f32_kernel, METH_NOARGS, "The best float32 kernel this CPU runs: 1 plain C, 2 AVX2, 3 AVX-512."},
    {"f32_product", f32_product, METH_VARARGS, "A float32 product with a packed right side into a sink (skip_lstm runtime)."},
    {"f32_scan", f32_scan, METH_VARARGS, "A whole bidirectional LSTM layer in float32."},
    {"i8_kernel", i8_kernel, METH_NOARGS, "The best int8 kernel this CPU runs: 0 none, 1 AVX2, 2 AVX-VNNI, 3 AVX512-VNNI."},
    {"i8_weight_max", i8_weight_max, METH_VARARGS, "The largest weight magnitude int8 kernel `which` takes (63 for AVX2, else 127)."},
    {"i8_kernel_runs", i8_kernel_runs, METH_VARARGS, "Whether this CPU runs int8 kernel N."},
    {"i8_product", i8_product, METH_VARARGS, "An int8 product with a packed right side into a sink (skip_lstm runtime)."},
    {"i8_scan", i8_scan, METH_VARARGS, "A whole bidirectional LSTM layer with int8 recurrent products."},
    {"window_sum", window_sum, METH_VARARGS, "The first layer's input projection from per-word products (input_layer.py)."},
    {"arc_features", arc_features, METH_VARARGS, "Arc-standard states' table rows and legality codes (runtime/parser.py)."},
    {"arc_apply", arc_apply, METH_VARARGS, "Arc-standard states take their actions (runtime/parser.py)."},
    {"bag_sum", bag_sum, METH_VARARGS, "Sums of table rows by index, the transition parser's hidden layer (runtime/parser.py)."},
    {"window_labels", window_labels, METH_VARARGS, "The tokenizer's labels, window by window (runtime/c_tokenizer.py)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fastscan", NULL, -1, methods};

/* The version of the functions above and their arguments: tagger/modules/fused.py (C_VERSION)
 * takes a build of this version only. Raise both with any change to what Python calls. */
#define FASTSCAN_VERSION 2

PyMODINIT_FUNC PyInit__fastscan(void) {
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddIntConstant(m, "VERSION", FASTSCAN_VERSION)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
