/* One time step of the skip-LSTM's inference scan, fused: everything after the recurrent matrix
 * product, in one pass over the state instead of a dozen tensor calls (tagger/modules/recurrent.py,
 * _scan_fused, says what it computes and when it is used). Plain C on raw float32 (and bfloat16)
 * buffers handed over as addresses and strides; the GIL is released while it runs, so batches in
 * threads run it in parallel. Built by `pip install` when a C compiler is there; without it the
 * scan stays in torch (the same arithmetic, to the last bits of exp).
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

/* c = f⊙c + i⊙tanh(s); h = o⊙tanh(c) (+ γ⊙k, + k or + o⊙k by kmode); both times the mask m */
static inline __attribute__((always_inline)) void cell(int64_t H, const float *restrict zi, const float *restrict zf,
                                                        const float *restrict zo, const float *restrict zg,
                                                        const float *restrict zs, float *restrict c, float *restrict h,
                                                        const float *restrict k, float m, int kmode) {
    for (int64_t j = 0; j < H; j++) {
        float i = sigmoid(zi[j]), f = sigmoid(zf[j]), o = sigmoid(zo[j]);
        float next = f * c[j] + i * tanh_(zs[j]);
        float out = o * tanh_(next);
        if (kmode == 1) out += sigmoid(zg[j]) * k[j];
        if (kmode == 2) out += k[j];
        if (kmode == 3) out += o * k[j];
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
    const float *zi = z, *zf = z + H, *zo = z + 2 * H, *zg = z + (s->nsig - 1) * H, *zs = z + s->nsig * H;
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

static PyMethodDef methods[] = {
    {"scan_order", scan_order, METH_VARARGS, "Both directions' input projections in scan order (recurrent.py)."},
    {"lstm_step", lstm_step, METH_VARARGS, "One fused LSTM time step after the recurrent product (see recurrent.py)."},
    {"window_sum", window_sum, METH_VARARGS, "The first layer's input projection from per-word products (input_layer.py)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fastscan", NULL, -1, methods};

PyMODINIT_FUNC PyInit__fastscan(void) { return PyModule_Create(&module); }
