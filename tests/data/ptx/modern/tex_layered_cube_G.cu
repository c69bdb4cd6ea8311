// nvcc -G build (unseen kernels, 2026-12-01): a reduced tex_layered_cube.cu, each fetch a call to
// a called .func that takes the handle as a .param .b64 (-G inlines nothing).
#include <cuda_runtime.h>
__global__ void tex_fetch_calls(cudaTextureObject_t t2dl, cudaTextureObject_t tcube, cudaSurfaceObject_t s1dl,
                                float4* out, int layer) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float u = (i & 63) / 64.0f;
    float4 a = tex2DLayered<float4>(t2dl, u, u, layer);
    float4 b = texCubemap<float4>(tcube, u, u, 1.0f - u);
    surf1DLayeredwrite<float>(a.x, s1dl, (i & 63) * 4, layer);
    out[i] = make_float4(a.x + b.x, a.y, b.z, a.w);
}
