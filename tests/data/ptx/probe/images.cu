// 1-D, 3-D and layered textures and surfaces through objects, for the probe's image geometries
// (tests/test_probe_images_gpu.py).  Regenerate:
//   nvcc -ptx -arch=sm_80 -o images.ptx images.cu && nvcc -ptx -arch=sm_80 -DWRONG -o images_wrong.ptx images.cu
// WRONG changes one texel of one output per kernel (a "deliberately wrong splice").
#include <cuda_runtime.h>

#ifdef WRONG
#define OFF(c) ((c) ? 1.0f : 0.0f)
#else
#define OFF(c) 0.0f
#endif

// tex.1d -> sust.b.1d: s[x] = 2 * t[x]
extern "C" __global__ void img_1d(cudaTextureObject_t t, cudaSurfaceObject_t s, int w) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= w) return;
    float v = tex1D<float>(t, x + 0.5f);
    surf1Dwrite(2.0f * v + OFF(x == 7), s, x * 4);
}

// tex.3d -> sust.b.3d: s[z][y][x] = t[z][y][x] + 1
extern "C" __global__ void img_3d(cudaTextureObject_t t, cudaSurfaceObject_t s, int w, int h, int d) {
    int x = threadIdx.x, y = blockIdx.x, z = blockIdx.y;
    if (x >= w || y >= h || z >= d) return;
    float v = tex3D<float>(t, x + 0.5f, y + 0.5f, z + 0.5f);
    surf3Dwrite(v + 1.0f + OFF(x == 1 && y == 2 && z == 3), s, x * 4, y, z);
}

// tex.a1d / tex.a2d -> sust.b.a1d / sust.b.a2d, and a 3-D surface read back (suld.b.3d)
extern "C" __global__ void img_layered(cudaTextureObject_t t1, cudaTextureObject_t t2, cudaSurfaceObject_t s1,
                                       cudaSurfaceObject_t s2, int w, int h, int layers) {
    int x = threadIdx.x, y = blockIdx.x, layer = blockIdx.y;
    if (x >= w || y >= h || layer >= layers) return;
    float a = tex1DLayered<float>(t1, x + 0.5f, layer);
    float b = tex2DLayered<float>(t2, x + 0.5f, y + 0.5f, layer);
    if (y == 0)
        surf1DLayeredwrite(a * 3.0f + OFF(x == 5 && layer == 2), s1, x * 4, layer);
    surf2DLayeredwrite(a + b + OFF(x == 0 && y == 1 && layer == 1), s2, x * 4, y, layer);
}

// an inout 3-D surface: suld.b.3d then sust.b.3d of the same texel (rgba32f: four channels)
extern "C" __global__ void img_inout3d(cudaSurfaceObject_t s, int w, int h, int d) {
    int x = threadIdx.x, y = blockIdx.x, z = blockIdx.y;
    if (x >= w || y >= h || z >= d) return;
    float4 v = surf3Dread<float4>(s, x * 16, y, z);
    v.x = -v.x; v.w = v.w * 0.5f + OFF(x == 0 && y == 0 && z == 1);
    surf3Dwrite(v, s, x * 16, y, z);
}
