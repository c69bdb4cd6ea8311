// Bindless textures and surfaces (texture/surface objects, .texref/.surfref as u64 handles):
// tex.2d.v4.f32.f32, tex.level / tex.grad (mip), tld4 (gather), tex.1d on integer coords,
// suld.b.2d.v4.b16 / suld.b.2d.b32 (.trap, .clamp), sust.b.2d.v4.b16.zero, sust.b.3d, suq/txq queries.
#include <cuda_runtime.h>
#include <stdint.h>

__global__ void tex_sample(cudaTextureObject_t tex, float4 *__restrict__ out, int w, int h, float lod) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float u = (x + 0.5f) / w, v = (y + 0.5f) / h;
    float4 a = tex2D<float4>(tex, u, v);                       // tex.2d.v4.f32.f32
    float4 b = tex2DLod<float4>(tex, u, v, lod);               // tex.level.2d.v4.f32.f32
    float4 c = tex2DGrad<float4>(tex, u, v, make_float2(1.f / w, 0.f), make_float2(0.f, 1.f / h));
    float4 g = tex2Dgather<float4>(tex, u, v, 1);              // tld4.g.2d.v4.f32.f32
    out[y * w + x] = make_float4(a.x + b.y, a.y + c.z, a.z + g.w, a.w + g.x);
}

__global__ void tex_fetch_int(cudaTextureObject_t tex1d, cudaTextureObject_t tex3d, int4 *__restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int4 a = tex1Dfetch<int4>(tex1d, i);                       // tex.1d.v4.s32.s32
    int4 b = tex3D<int4>(tex3d, i * 0.25f, 0.5f, 0.5f);        // tex.3d.v4.s32.f32
    out[i] = make_int4(a.x + b.x, a.y, a.z, a.w + b.w);
}

// Read one surface, write another: ushort4 with cudaBoundaryModeZero -> sust.b.2d.v4.b16.zero.
__global__ void surf_copy(cudaSurfaceObject_t src, cudaSurfaceObject_t dst, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    ushort4 v = surf2Dread<ushort4>(src, x * sizeof(ushort4), y);                        // suld.b.2d.v4.b16.trap
    ushort4 c = surf2Dread<ushort4>(src, (x + 1) * sizeof(ushort4), y, cudaBoundaryModeClamp);
    v.x += c.x; v.w ^= c.w;
    surf2Dwrite(v, dst, x * sizeof(ushort4), y, cudaBoundaryModeZero);                   // sust.b.2d.v4.b16.zero
}

__global__ void surf_float_3d(cudaSurfaceObject_t s2, cudaSurfaceObject_t s3, int depth) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    float f = surf2Dread<float>(s2, x * 4, y, cudaBoundaryModeClamp);                     // suld.b.2d.b32.clamp
    for (int z = 0; z < depth; ++z) {
        surf3Dwrite<float2>(make_float2(f, (float)z), s3, x * 8, y, z, cudaBoundaryModeTrap);  // sust.b.3d.v2.b32.trap
    }
}

// Queries: txq / suq via inline PTX on the object handles.
__global__ void tex_surf_query(cudaTextureObject_t t, cudaSurfaceObject_t s, int *__restrict__ out) {
    int tw, th, sw;
    asm("txq.width.b32 %0, [%1];" : "=r"(tw) : "l"(t));
    asm("txq.height.b32 %0, [%1];" : "=r"(th) : "l"(t));
    asm("suq.width.b32 %0, [%1];" : "=r"(sw) : "l"(s));
    out[threadIdx.x] = tw * th + sw;
}

// Sparse-texture residency (tex ... {d}|p predicate output) and the explicit mip-base form
// (tex.base) written as inline PTX.
__global__ void tex_sparse_base(cudaTextureObject_t tex, float4 *__restrict__ out, int *__restrict__ resident, float u, float v) {
    bool is_res = false;
    float4 a = tex2D<float4>(tex, u + threadIdx.x, v, &is_res);
    float4 b;
    asm("tex.base.2d.v4.f32.f32 {%0, %1, %2, %3}, [%4, {%5, %6}];"
        : "=f"(b.x), "=f"(b.y), "=f"(b.z), "=f"(b.w) : "l"(tex), "f"(u), "f"(v + threadIdx.x));
    out[threadIdx.x] = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
    resident[threadIdx.x] = is_res;
}
