// nvcc -G build of struct_params_dynsmem.cu (2026-12-01): the struct copied through the generic %SP frame
#include "struct_params_dynsmem.cu"
