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
 * OverflowError. Compiled against this interpreter's headers on first use and cached.
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

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    cu_launch_kernel_t launch;
    void *function;
    unsigned dims[7];
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
    const unsigned *d = self->dims;
    int err = self->launch(self->function, d[0], d[1], d[2], d[3], d[4], d[5], d[6], stream,
                           block, NULL);
    return PyLong_FromLong(err);
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
    if (launch == 0) {
        PyErr_SetString(PyExc_ValueError, "launcher: the address of cuLaunchKernel is NULL");
        return -1;
    }
    if (nptrs > TVM_MAX_PTRS || nptrs < -1) {
        PyErr_Format(PyExc_ValueError, "launcher: nptrs must be -1 (a parameter array) or "
                     "0..%d pointers, got %zd", TVM_MAX_PTRS, nptrs);
        return -1;
    }
    self->launch = (cu_launch_kernel_t)(uintptr_t)launch;
    self->function = (void *)(uintptr_t)function;
    unsigned dims[7] = {gx, gy, gz, bx, by, bz, smem};
    memcpy(self->dims, dims, sizeof(dims));
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
    const unsigned *d = ((Launcher *)self)->dims;
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

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "tvm_c_launcher", "The CUDA backend's C launcher.", -1, NULL,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_tvm_c_launcher(void) {
    if (PyType_Ready(&LauncherType) < 0) {
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
    return m;
}
