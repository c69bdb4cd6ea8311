// Read 2026-11-30: a kernel with 130 parameters: scalars of every width, structs by value of odd sizes,
// and a __grid_constant__ struct whose address is taken.
struct S3 { char a, b, c; };
struct S12 { float x, y; int z; };
struct alignas(16) S32 { double d[2]; long long q; int i; };
#define P8(T, n) T n##0, T n##1, T n##2, T n##3, T n##4, T n##5, T n##6, T n##7
#define U8(n) n##0 + n##1 + n##2 + n##3 + n##4 + n##5 + n##6 + n##7
__global__ void __launch_bounds__(128, 4) many_params(
    float *out, P8(int, i), P8(int, j), P8(float, f), P8(float, g), P8(double, d), P8(long long, q),
    P8(unsigned short, h), P8(unsigned char, c), P8(short, s), P8(char, b), P8(float, e), P8(int, k),
    P8(unsigned, u), P8(float, r), S3 s3a, S3 s3b, S12 s12a, S12 s12b, S32 s32, P8(bool, t),
    const __grid_constant__ S32 gc, int n) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n) return;
    float acc = U8(i) + U8(j) + U8(f) + U8(g) + U8(d) + U8(q) + U8(h) + U8(c) + U8(s) + U8(b);
    acc += U8(e) * U8(k) - U8(u) + U8(r);
    acc += s3a.a + s3a.b * s3b.c + s12a.x * s12b.y + s12a.z - s12b.z + s32.d[tid & 1] + s32.q + s32.i;
    acc += (t0 ? 1 : 0) + (t3 ? 2 : 0) + (t7 ? 4 : 0);
    const S32 *pg = &gc;
    acc += pg->d[tid & 1] + pg->q;
    out[tid] = acc;
}
