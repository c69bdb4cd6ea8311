// Layered and cube textures / surfaces through objects: tex.a2d, tex.cube, tex.acube, tex.grad.a2d,
// tld4.a2d, tex.level.cube, suld.b.a2d, sust.b.a1d, sust.p (formatted) (unseen kernels, 2026-12-01).
#include <cuda_runtime.h>
__global__ void tex_layered_cube(cudaTextureObject_t t2dl, cudaTextureObject_t tcube, cudaTextureObject_t tcubel,
                                 cudaSurfaceObject_t s2dl, cudaSurfaceObject_t s1dl, float4* out, int layer) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float u = (i & 63) / 64.0f, v = (i >> 6) / 64.0f;
    float4 a = tex2DLayered<float4>(t2dl, u, v, layer);
    float4 b = texCubemap<float4>(tcube, u, v, 1.0f - u);
    float4 c = texCubemapLayered<float4>(tcubel, u, v, -1.0f, layer + 1);
    float4 d = tex2DLayeredGrad<float4>(t2dl, u, v, layer, make_float2(0.01f, 0.0f), make_float2(0.0f, 0.01f));
    float4 e = tex2DLayeredLod<float4>(t2dl, u, v, layer, 1.5f);
    float4 g = tex2Dgather<float4>(t2dl, u, v, 2);
    float4 h = texCubemapLod<float4>(tcube, u, -v, 0.5f, 2.0f);
    uint2 w = surf2DLayeredread<uint2>(s2dl, (i & 63) * 8, i >> 6, layer, cudaBoundaryModeClamp);
    surf1DLayeredwrite<uint2>(w, s1dl, (i & 63) * 8, layer + 1, cudaBoundaryModeZero);
    float4 r;
    r.x = a.x + b.y + c.z + d.w; r.y = e.x + g.y + h.z; r.z = __uint_as_float(w.x); r.w = __uint_as_float(w.y);
    out[i] = r;
}
