// The CUDA emulator's stand-in for <cuda_fp16.h>: the built-ins are in tvm_cuda_emu.h.
#pragma once
#include "tvm_cuda_emu.h"
