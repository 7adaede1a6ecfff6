// The CUDA emulator's stand-in for <cuda.h>: the built-ins are in tvm_cuda_emu.h.
#pragma once
#include "tvm_cuda_emu.h"
