// Header for lineinfo_inlined.cu: gives the PTX a second .file entry.
#pragma once
__device__ __forceinline__ float soft_clip(float x, float k) {
    float t = x / k;
    return t / (1.f + fabsf(t));
}
__device__ __forceinline__ float lerp3(float a, float b, float t) {
    return a + t * (b - a);
}
