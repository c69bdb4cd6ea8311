// nvcc -G build of struct_params_dynsmem.cu (round 4): the struct copied through the generic %SP frame
#include "struct_params_dynsmem.cu"
