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

static PyMethodDef methods[] = {
    {"lstm_step", lstm_step, METH_VARARGS, "One fused LSTM time step after the recurrent product (see recurrent.py)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fastscan", NULL, -1, methods};

PyMODINIT_FUNC PyInit__fastscan(void) { return PyModule_Create(&module); }
