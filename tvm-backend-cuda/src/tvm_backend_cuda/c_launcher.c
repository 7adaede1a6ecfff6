/* The C launcher of the CUDA backend's hot call (see c_launcher.py).
 *
 * A Launcher holds one kernel's launch: the driver's cuLaunchKernel (its address, taken from
 * the libcuda the process already loaded), the kernel handle and the grid, block and dynamic
 * shared memory sizes. Calling it launches on a raw stream handle:
 *
 *   launcher(stream, p0, ..., pN-1) -> CUresult   (N pointer arguments, passed by value)
 *   launcher(stream, params)        -> CUresult   (built with nptrs=-1: the address of a
 *                                                  void*[] parameter array made by the caller)
 *
 * It checks nothing of the kernel: the caller (the fast call) has checked the arguments. It
 * returns the driver's result as an int (0: launched); argument errors raise TypeError or
 * OverflowError.
 *
 * A TensorLauncher also checks the arguments: it is made from the tensors of a call that passed
 * the Python checks, and takes tensors of the same exact Python type, read through the type's
 * DLPack C exchange API (DLPack 1.3, `__dlpack_c_exchange_api__`; torch 2.10 and later): a
 * tensor is accepted when its device, dtype, shape and strides equal those of the tensor it
 * replaces and its address has the alignment asked for. The stream is the producer's current
 * work stream on that device (torch's current stream). It launches with the pointers, or with
 * the parameter array cached under the pointers in a dict (tensor-map kernels):
 *
 *   tensor_launcher(t0, ..., tN-1) -> 0 (launched), -1 (not these tensors: the caller takes its
 *                                     general path), or the failed launch's CUresult (> 0)
 *
 * Compiled against this interpreter's headers on first use and cached.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <string.h>
#include <stdint.h>

#define TVM_MAX_PTRS 64

typedef int (*cu_launch_kernel_t)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                  unsigned by, unsigned bz, unsigned smem, void *stream,
                                  void **params, void **extra);

/* What both launchers hold of one kernel's launch: the driver entry, the kernel handle and
 * the grid, block and dynamic shared memory sizes. */
typedef struct {
    cu_launch_kernel_t launch;
    void *function;
    unsigned dims[7];
} kernel_launch;

/* Fill `k` from the arguments both launchers' constructors parse; -1 with ValueError set. */
static int kernel_launch_set(kernel_launch *k, const char *who, unsigned long long launch,
                             unsigned long long function, const unsigned dims[7]) {
    if (launch == 0) {
        PyErr_Format(PyExc_ValueError, "%s: the address of cuLaunchKernel is NULL", who);
        return -1;
    }
    k->launch = (cu_launch_kernel_t)(uintptr_t)launch;
    k->function = (void *)(uintptr_t)function;
    memcpy(k->dims, dims, sizeof(k->dims));
    return 0;
}

/* Launch `k` on `stream` with the parameter array `block`: the driver's result as an int. */
static PyObject *kernel_launch_run(const kernel_launch *k, void *stream, void **block) {
    const unsigned *d = k->dims;
    int err = k->launch(k->function, d[0], d[1], d[2], d[3], d[4], d[5], d[6], stream, block,
                        NULL);
    return PyLong_FromLong(err);
}

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    kernel_launch kernel;
    Py_ssize_t nptrs;
} Launcher;

static void *as_pointer(PyObject *obj, const char *what, Py_ssize_t index) {
    if (!PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "launcher: %s #%zd must be an int (an address), not %.100s",
                     what, index, Py_TYPE(obj)->tp_name);
        return NULL;
    }
    unsigned long long value = PyLong_AsUnsignedLongLong(obj);
    if (value == (unsigned long long)-1 && PyErr_Occurred()) {
        return NULL;
    }
    return (void *)(uintptr_t)value;
}

static PyObject *launcher_vectorcall(PyObject *self_obj, PyObject *const *args, size_t nargsf,
                                     PyObject *kwnames) {
    Launcher *self = (Launcher *)self_obj;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Py_ssize_t want = self->nptrs < 0 ? 2 : self->nptrs + 1;
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0) {
        PyErr_SetString(PyExc_TypeError, "launcher: takes no keyword arguments");
        return NULL;
    }
    if (nargs != want) {
        PyErr_Format(PyExc_TypeError, "launcher: takes %zd arguments (the stream, then %s), got %zd",
                     want, self->nptrs < 0 ? "the parameter array" : "the pointers", nargs);
        return NULL;
    }
    void *stream = as_pointer(args[0], "argument", 0);
    if (stream == NULL && PyErr_Occurred()) {
        return NULL;
    }
    void *values[TVM_MAX_PTRS];
    void *params[TVM_MAX_PTRS];
    void **block = params;
    if (self->nptrs < 0) {
        block = (void **)as_pointer(args[1], "argument", 1);
        if (block == NULL) {
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_ValueError, "launcher: the parameter array is NULL");
            }
            return NULL;
        }
    } else {
        for (Py_ssize_t i = 0; i < self->nptrs; i++) {
            values[i] = as_pointer(args[i + 1], "argument", i + 1);
            if (values[i] == NULL && PyErr_Occurred()) {
                return NULL;
            }
            params[i] = &values[i];
        }
    }
    return kernel_launch_run(&self->kernel, stream, block);
}

static int launcher_init(PyObject *self_obj, PyObject *args, PyObject *kwds) {
    Launcher *self = (Launcher *)self_obj;
    static char *keywords[] = {"launch", "function", "grid", "block", "smem", "nptrs", NULL};
    unsigned long long launch = 0, function = 0;
    unsigned gx, gy, gz, bx, by, bz, smem;
    Py_ssize_t nptrs;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "KK(III)(III)In", keywords, &launch, &function,
                                     &gx, &gy, &gz, &bx, &by, &bz, &smem, &nptrs)) {
        return -1;
    }
    unsigned dims[7] = {gx, gy, gz, bx, by, bz, smem};
    if (kernel_launch_set(&self->kernel, "launcher", launch, function, dims) != 0) {
        return -1;
    }
    if (nptrs > TVM_MAX_PTRS || nptrs < -1) {
        PyErr_Format(PyExc_ValueError, "launcher: nptrs must be -1 (a parameter array) or "
                     "0..%d pointers, got %zd", TVM_MAX_PTRS, nptrs);
        return -1;
    }
    self->nptrs = nptrs;
    self->vectorcall = launcher_vectorcall;
    return 0;
}

static PyObject *launcher_call(PyObject *self, PyObject *args, PyObject *kwargs) {
    return PyVectorcall_Call(self, args, kwargs);
}

static PyObject *launcher_get_nptrs(PyObject *self, void *closure) {
    (void)closure;
    return PyLong_FromSsize_t(((Launcher *)self)->nptrs);
}

static PyObject *launcher_get_dims(PyObject *self, void *closure) {
    (void)closure;
    const unsigned *d = ((Launcher *)self)->kernel.dims;
    return Py_BuildValue("((III)(III)I)", d[0], d[1], d[2], d[3], d[4], d[5], d[6]);
}

static PyGetSetDef launcher_getset[] = {
    {"nptrs", launcher_get_nptrs, NULL, "pointers per call (-1: a parameter array)", NULL},
    {"dims", launcher_get_dims, NULL, "((grid), (block), dynamic shared memory bytes)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject LauncherType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tvm_c_launcher.Launcher",
    .tp_basicsize = sizeof(Launcher),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "One kernel's cuLaunchKernel: call it with (stream, *pointers) or (stream, params).",
    .tp_new = PyType_GenericNew,
    .tp_init = launcher_init,
    .tp_call = launcher_call,
    .tp_vectorcall_offset = offsetof(Launcher, vectorcall),
    .tp_getset = launcher_getset,
};

/* ---- the tensor launcher ------------------------------------------------------------------
 * The DLPack ABI as the DLPack specification (dlpack.h, version 1.3) defines it. */

typedef struct {
    int32_t device_type;
    int32_t device_id;
} tvm_dl_device;

typedef struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} tvm_dl_dtype;

typedef struct {
    void *data;
    tvm_dl_device device;
    int32_t ndim;
    tvm_dl_dtype dtype;
    int64_t *shape;
    int64_t *strides; /* NULL: compact row-major */
    uint64_t byte_offset;
} tvm_dl_tensor;

typedef struct tvm_dl_api_header {
    uint32_t major;
    uint32_t minor;
    struct tvm_dl_api_header *prev_api;
} tvm_dl_api_header;

typedef struct {
    tvm_dl_api_header header;
    void *managed_tensor_allocator;
    void *managed_tensor_from_py_object_no_sync;
    void *managed_tensor_to_py_object_no_sync;
    int (*dltensor_from_py_object_no_sync)(void *py_object, tvm_dl_tensor *out);
    int (*current_work_stream)(int32_t device_type, int32_t device_id, void **out_stream);
} tvm_dl_api;

#define TVM_MAX_RANK 16

typedef struct {
    tvm_dl_device device;
    tvm_dl_dtype dtype;
    int32_t ndim;
    uint64_t align;
    int64_t shape[TVM_MAX_RANK];
    int64_t strides[TVM_MAX_RANK];
} tvm_expect;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    kernel_launch kernel;
    const tvm_dl_api *api;
    PyTypeObject *type;  /* the tensors' exact Python type (a strong reference) */
    PyObject *blocks;    /* NULL: launch with the pointers; else {(p0, ...): (params, ...)} */
    Py_ssize_t n;
    tvm_expect expect[TVM_MAX_PTRS];
} TensorLauncher;

/* The strides of `t` (compact row-major where the producer gave none) into `out`. */
static void dl_strides(const tvm_dl_tensor *t, int64_t *out) {
    if (t->strides != NULL) {
        memcpy(out, t->strides, sizeof(int64_t) * (size_t)t->ndim);
        return;
    }
    int64_t step = 1;
    for (int32_t d = t->ndim - 1; d >= 0; d--) {
        out[d] = step;
        step *= t->shape[d];
    }
}

/* The exchange API of `type`, or NULL with ValueError set. */
static const tvm_dl_api *exchange_api(PyTypeObject *type) {
    const tvm_dl_api *api = NULL;
    PyObject *obj = PyObject_GetAttrString((PyObject *)type, "__dlpack_c_exchange_api__");
    if (obj == NULL) {
        PyErr_Clear();
        obj = PyObject_GetAttrString((PyObject *)type, "__c_dlpack_exchange_api__");
    }
    if (obj == NULL) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "tensor launcher: %.100s has no DLPack C exchange API "
                     "(__dlpack_c_exchange_api__; torch 2.10 or later has it)", type->tp_name);
        return NULL;
    }
    if (PyCapsule_CheckExact(obj)) {
        api = (const tvm_dl_api *)PyCapsule_GetPointer(obj, PyCapsule_GetName(obj));
    } else if (PyLong_Check(obj)) {
        api = (const tvm_dl_api *)PyLong_AsVoidPtr(obj);
    }
    Py_DECREF(obj);
    if (api == NULL) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "tensor launcher: %.100s's DLPack C exchange API is "
                     "neither a capsule nor an address", type->tp_name);
        return NULL;
    }
    if (api->header.major != 1 || api->dltensor_from_py_object_no_sync == NULL ||
        api->current_work_stream == NULL) {
        PyErr_Format(PyExc_ValueError, "tensor launcher: %.100s's DLPack C exchange API "
                     "(version %u.%u) lacks the non-owning export or the stream query",
                     type->tp_name, api->header.major, api->header.minor);
        return NULL;
    }
    return api;
}

static PyObject *tensor_launcher_vectorcall(PyObject *self_obj, PyObject *const *args,
                                            size_t nargsf, PyObject *kwnames) {
    TensorLauncher *self = (TensorLauncher *)self_obj;
    Py_ssize_t n = self->n;
    if (PyVectorcall_NARGS(nargsf) != n || (kwnames != NULL && PyTuple_GET_SIZE(kwnames))) {
        return PyLong_FromLong(-1);
    }
    void *values[TVM_MAX_PTRS];
    void *params[TVM_MAX_PTRS];
    int64_t strides[TVM_MAX_RANK];
    for (Py_ssize_t i = 0; i < n; i++) {
        const tvm_expect *e = &self->expect[i];
        if (Py_TYPE(args[i]) != self->type) {
            return PyLong_FromLong(-1);
        }
        tvm_dl_tensor dl;
        if (self->api->dltensor_from_py_object_no_sync((void *)args[i], &dl) != 0) {
            PyErr_Clear(); /* not exportable (the general path tells why, if it is an error) */
            return PyLong_FromLong(-1);
        }
        if (dl.ndim != e->ndim || dl.device.device_type != e->device.device_type ||
            dl.device.device_id != e->device.device_id || dl.dtype.code != e->dtype.code ||
            dl.dtype.bits != e->dtype.bits || dl.dtype.lanes != e->dtype.lanes ||
            memcmp(dl.shape, e->shape, sizeof(int64_t) * (size_t)e->ndim) != 0) {
            return PyLong_FromLong(-1);
        }
        dl_strides(&dl, strides);
        if (memcmp(strides, e->strides, sizeof(int64_t) * (size_t)e->ndim) != 0) {
            return PyLong_FromLong(-1);
        }
        uintptr_t address = (uintptr_t)dl.data + (uintptr_t)dl.byte_offset;
        if (address % e->align) {
            return PyLong_FromLong(-1);
        }
        values[i] = (void *)address;
        params[i] = &values[i];
    }
    void *stream = NULL;
    if (self->api->current_work_stream(self->expect[0].device.device_type,
                                       self->expect[0].device.device_id, &stream) != 0) {
        PyErr_Clear();
        return PyLong_FromLong(-1);
    }
    void **block = params;
    if (self->blocks != NULL) {
        PyObject *key = PyTuple_New(n);
        if (key == NULL) {
            return NULL;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *p = PyLong_FromVoidPtr(values[i]);
            if (p == NULL) {
                Py_DECREF(key);
                return NULL;
            }
            PyTuple_SET_ITEM(key, i, p);
        }
        PyObject *found = PyDict_GetItemWithError(self->blocks, key); /* borrowed */
        Py_DECREF(key);
        if (found == NULL) {
            if (PyErr_Occurred()) {
                return NULL;
            }
            return PyLong_FromLong(-1); /* a new pointer set: the general path encodes it */
        }
        if (!PyTuple_Check(found) || PyTuple_GET_SIZE(found) < 1) {
            PyErr_SetString(PyExc_TypeError, "tensor launcher: a cached block must be a tuple "
                            "(parameter array address, ...)");
            return NULL;
        }
        block = (void **)PyLong_AsVoidPtr(PyTuple_GET_ITEM(found, 0));
        if (block == NULL) {
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_ValueError, "tensor launcher: a cached parameter array "
                                "is NULL");
            }
            return NULL;
        }
    }
    return kernel_launch_run(&self->kernel, stream, block);
}

static int tensor_launcher_init(PyObject *self_obj, PyObject *args, PyObject *kwds) {
    TensorLauncher *self = (TensorLauncher *)self_obj;
    static char *keywords[] = {"launch", "function", "grid", "block", "smem", "tensors",
                               "aligns", "blocks", NULL};
    unsigned long long launch = 0, function = 0;
    unsigned gx, gy, gz, bx, by, bz, smem;
    PyObject *tensors, *aligns, *blocks = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "KK(III)(III)IO!O!|O", keywords, &launch,
                                     &function, &gx, &gy, &gz, &bx, &by, &bz, &smem,
                                     &PyTuple_Type, &tensors, &PyTuple_Type, &aligns, &blocks)) {
        return -1;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(tensors);
    unsigned dims[7] = {gx, gy, gz, bx, by, bz, smem};
    if (kernel_launch_set(&self->kernel, "tensor launcher", launch, function, dims) != 0) {
        return -1;
    }
    if (n < 1 || n > TVM_MAX_PTRS || PyTuple_GET_SIZE(aligns) != n) {
        PyErr_Format(PyExc_ValueError, "tensor launcher: 1..%d tensors with one alignment each, "
                     "got %zd tensors and %zd alignments", TVM_MAX_PTRS, n,
                     PyTuple_GET_SIZE(aligns));
        return -1;
    }
    if (blocks != Py_None && !PyDict_CheckExact(blocks)) {
        PyErr_SetString(PyExc_TypeError, "tensor launcher: blocks must be a dict or None");
        return -1;
    }
    PyTypeObject *type = Py_TYPE(PyTuple_GET_ITEM(tensors, 0));
    const tvm_dl_api *api = exchange_api(type);
    if (api == NULL) {
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = PyTuple_GET_ITEM(tensors, i);
        if (Py_TYPE(t) != type) {
            PyErr_Format(PyExc_ValueError, "tensor launcher: tensor #%zd is a %.100s, not a "
                         "%.100s like tensor #0", i, Py_TYPE(t)->tp_name, type->tp_name);
            return -1;
        }
        tvm_dl_tensor dl;
        if (api->dltensor_from_py_object_no_sync((void *)t, &dl) != 0) {
            return -1;
        }
        if (dl.ndim < 0 || dl.ndim > TVM_MAX_RANK) {
            PyErr_Format(PyExc_ValueError, "tensor launcher: tensor #%zd has rank %d (at most "
                         "%d)", i, (int)dl.ndim, TVM_MAX_RANK);
            return -1;
        }
        unsigned long long align = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(aligns, i));
        if (PyErr_Occurred()) {
            return -1;
        }
        tvm_expect *e = &self->expect[i];
        e->device = dl.device;
        e->dtype = dl.dtype;
        e->ndim = dl.ndim;
        e->align = align ? align : 1;
        memcpy(e->shape, dl.shape, sizeof(int64_t) * (size_t)dl.ndim);
        dl_strides(&dl, e->strides);
    }
    self->api = api;
    Py_INCREF(type);
    Py_XSETREF(self->type, type);
    if (blocks != Py_None) {
        Py_INCREF(blocks);
        Py_XSETREF(self->blocks, blocks);
    } else {
        Py_CLEAR(self->blocks);
    }
    self->n = n;
    self->vectorcall = tensor_launcher_vectorcall;
    return 0;
}

static void tensor_launcher_dealloc(PyObject *self_obj) {
    TensorLauncher *self = (TensorLauncher *)self_obj;
    Py_CLEAR(self->type);
    Py_CLEAR(self->blocks);
    Py_TYPE(self_obj)->tp_free(self_obj);
}

static PyObject *tensor_launcher_get_n(PyObject *self, void *closure) {
    (void)closure;
    return PyLong_FromSsize_t(((TensorLauncher *)self)->n);
}

static PyObject *tensor_launcher_get_cached(PyObject *self, void *closure) {
    (void)closure;
    return PyBool_FromLong(((TensorLauncher *)self)->blocks != NULL);
}

static PyGetSetDef tensor_launcher_getset[] = {
    {"ntensors", tensor_launcher_get_n, NULL, "tensors per call", NULL},
    {"cached_blocks", tensor_launcher_get_cached, NULL,
     "whether it launches with parameter arrays cached under the pointers", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject TensorLauncherType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tvm_c_launcher.TensorLauncher",
    .tp_basicsize = sizeof(TensorLauncher),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "One kernel's launch from tensors like the ones it was made from: call it with "
              "the tensors; 0: launched, -1: not these tensors, > 0: the CUresult.",
    .tp_new = PyType_GenericNew,
    .tp_init = tensor_launcher_init,
    .tp_dealloc = tensor_launcher_dealloc,
    .tp_call = launcher_call,
    .tp_vectorcall_offset = offsetof(TensorLauncher, vectorcall),
    .tp_getset = tensor_launcher_getset,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "tvm_c_launcher", "The CUDA backend's C launcher.", -1, NULL,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_tvm_c_launcher(void) {
    if (PyType_Ready(&LauncherType) < 0 || PyType_Ready(&TensorLauncherType) < 0) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) {
        return NULL;
    }
    Py_INCREF(&LauncherType);
    if (PyModule_AddObject(m, "Launcher", (PyObject *)&LauncherType) < 0) {
        Py_DECREF(&LauncherType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&TensorLauncherType);
    if (PyModule_AddObject(m, "TensorLauncher", (PyObject *)&TensorLauncherType) < 0) {
        Py_DECREF(&TensorLauncherType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
