// nvshmemx.h for the CUDA emulator: the extended API is declared in its nvshmem.h.
#pragma once
#include "nvshmem.h"
