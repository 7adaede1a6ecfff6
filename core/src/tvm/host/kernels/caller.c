/* _tvm_host_caller: the fast call path of host executables (a CPython extension module).
 *
 * One module per Python and numpy version, compiled on first use and cached; it does not depend
 * on any kernel. A Caller holds a kernel's packed entry point (int32_t f(const TVMHostValue*)),
 * a plan of precomputed checks, and the Python function to call instead when a check does not
 * pass. Calling it checks each argument exactly as core's argument checker would accept it
 * (numpy arrays of the exact type, dtype, native byte order, rank and shape, C-contiguous;
 * Python ints in range, floats, bools), binds symbolic dimensions, fills the value array and
 * calls the kernel with the GIL released. Anything else - another array type, a wrong argument
 * (whose message the full checker gives), a signature this plan cannot express - goes to the
 * fallback unchanged, so every check and message of the full path stays.
 *
 * Plan (built by tvm.host.runtime): checks = tuple of per-argument tuples
 *   (ARG_ARRAY, type_num, contiguous, dim0, dim1, ...)   dim >= 0: that extent; dim < 0: the
 *                                                         variable slot -dim-1 (bind or compare)
 *   (ARG_INT, lo, hi, slot)  (ARG_FLOAT, slot)  (ARG_BOOL, slot)   slot -1: none
 * and values = tuple of per-C-parameter tuples (FROM_ARG, arg index) or (FROM_SLOT, slot).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <stddef.h>
#include <stdint.h>

typedef union { void* p; int64_t i; double f; } TVMHostValue;
typedef int32_t (*tvm_packed_fn)(const TVMHostValue*);
typedef const char* (*tvm_error_fn)(void);

enum { ARG_ARRAY = 0, ARG_INT = 1, ARG_FLOAT = 2, ARG_BOOL = 3 };
enum { FROM_ARG = 0, FROM_SLOT = 1 };
#define MAX_DIMS 8
#define MAX_ARGS 64
#define MAX_SLOTS 64

typedef struct {
  int kind, type_num, contiguous, ndim, slot;
  int64_t dims[MAX_DIMS], lo, hi;
} ArgCheck;

typedef struct {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  tvm_packed_fn fn;
  tvm_error_fn error_fn;
  PyObject* fallback;
  PyObject* error_cls;
  PyObject* name;
  Py_ssize_t nargs, nvalues, nslots;
  ArgCheck checks[MAX_ARGS];
  int value_from[MAX_ARGS * 2], value_index[MAX_ARGS * 2];
} Caller;

static int64_t item_i64(PyObject* t, Py_ssize_t i, int* ok) {
  PyObject* v = PyTuple_GetItem(t, i);
  if (v == NULL) { *ok = 0; return 0; }
  long long x = PyLong_AsLongLong(v);
  if (x == -1 && PyErr_Occurred()) *ok = 0;
  return (int64_t)x;
}

static int parse_plan(Caller* self, PyObject* checks, PyObject* values) {
  int ok = 1;
  if (!PyTuple_Check(checks) || !PyTuple_Check(values)) goto bad;
  self->nargs = PyTuple_GET_SIZE(checks);
  self->nvalues = PyTuple_GET_SIZE(values);
  if (self->nargs > MAX_ARGS || self->nvalues > MAX_ARGS * 2) goto bad;
  self->nslots = 0;
  for (Py_ssize_t a = 0; a < self->nargs; ++a) {
    PyObject* c = PyTuple_GET_ITEM(checks, a);
    ArgCheck* k = &self->checks[a];
    if (!PyTuple_Check(c) || PyTuple_GET_SIZE(c) < 2) goto bad;
    k->kind = (int)item_i64(c, 0, &ok);
    k->slot = -1;
    if (k->kind == ARG_ARRAY) {
      k->type_num = (int)item_i64(c, 1, &ok);
      k->contiguous = (int)item_i64(c, 2, &ok);
      k->ndim = (int)(PyTuple_GET_SIZE(c) - 3);
      if (k->ndim > MAX_DIMS) goto bad;
      for (int d = 0; d < k->ndim; ++d) {
        k->dims[d] = item_i64(c, 3 + d, &ok);
        if (k->dims[d] < 0 && -k->dims[d] > self->nslots) self->nslots = -k->dims[d];
      }
    } else if (k->kind == ARG_INT) {
      k->lo = item_i64(c, 1, &ok);
      k->hi = item_i64(c, 2, &ok);
      k->slot = (int)item_i64(c, 3, &ok);
    } else if (k->kind == ARG_FLOAT || k->kind == ARG_BOOL) {
      k->slot = (int)item_i64(c, 1, &ok);
    } else {
      goto bad;
    }
    if (k->slot + 1 > self->nslots) self->nslots = k->slot + 1;
  }
  for (Py_ssize_t v = 0; v < self->nvalues; ++v) {
    PyObject* c = PyTuple_GET_ITEM(values, v);
    if (!PyTuple_Check(c) || PyTuple_GET_SIZE(c) != 2) goto bad;
    self->value_from[v] = (int)item_i64(c, 0, &ok);
    self->value_index[v] = (int)item_i64(c, 1, &ok);
    if (self->value_from[v] == FROM_SLOT && self->value_index[v] + 1 > self->nslots)
      self->nslots = self->value_index[v] + 1;
    if (self->value_from[v] == FROM_ARG && self->value_index[v] >= self->nargs) goto bad;
  }
  if (!ok) return -1;
  if (self->nslots > MAX_SLOTS) goto bad;
  return 0;
bad:
  if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "_tvm_host_caller: malformed plan");
  return -1;
}

/* 1: the slot now holds v (bound here, or already equal); 0: it holds another value. */
static inline int bind(int64_t* slots, char* bound, int slot, int64_t v) {
  if (slot < 0) return 1;
  if (!bound[slot]) { bound[slot] = 1; slots[slot] = v; return 1; }
  return slots[slot] == v;
}

/* Fill `args` (TVMHostValue per argument) from the Python arguments; 0 when a check fails. */
static int fast_checks(Caller* self, PyObject* const* argv, TVMHostValue* args, int64_t* slots,
                       char* bound) {
  for (Py_ssize_t a = 0; a < self->nargs; ++a) {
    const ArgCheck* k = &self->checks[a];
    PyObject* x = argv[a];
    if (k->kind == ARG_ARRAY) {
      if (!PyArray_CheckExact(x)) return 0;
      PyArrayObject* arr = (PyArrayObject*)x;
      if (PyArray_TYPE(arr) != k->type_num || PyArray_ISBYTESWAPPED(arr)) return 0;
      if (PyArray_NDIM(arr) != k->ndim) return 0;
      const npy_intp* shape = PyArray_DIMS(arr);
      for (int d = 0; d < k->ndim; ++d) {
        const int64_t want = k->dims[d];
        if (want >= 0 ? shape[d] != want : !bind(slots, bound, (int)(-want - 1), shape[d]))
          return 0;
      }
      if (k->contiguous && !PyArray_IS_C_CONTIGUOUS(arr)) return 0;
      args[a].p = PyArray_DATA(arr);
    } else if (k->kind == ARG_INT) {
      if (!PyLong_CheckExact(x)) return 0;
      int overflow = 0;
      long long v = PyLong_AsLongLongAndOverflow(x, &overflow);
      if (overflow || v < k->lo || v > k->hi) return 0;
      if (!bind(slots, bound, k->slot, v)) return 0;
      args[a].i = v;
    } else if (k->kind == ARG_FLOAT) {
      double v;
      if (PyFloat_CheckExact(x)) v = PyFloat_AS_DOUBLE(x);
      else if (PyLong_CheckExact(x)) {
        v = PyLong_AsDouble(x);
        if (v == -1.0 && PyErr_Occurred()) { PyErr_Clear(); return 0; }
      } else return 0;
      if (k->slot >= 0) return 0;  /* a float bound to a shape variable: the full path */
      args[a].f = v;
    } else {
      if (!PyBool_Check(x)) return 0;
      args[a].i = x == Py_True;
      if (!bind(slots, bound, k->slot, args[a].i)) return 0;
    }
  }
  return 1;
}

static PyObject* caller_vectorcall(PyObject* callable, PyObject* const* argv, size_t nargsf,
                                   PyObject* kwnames) {
  Caller* self = (Caller*)callable;
  const Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  TVMHostValue args[MAX_ARGS], values[MAX_ARGS * 2];
  int64_t slots[MAX_SLOTS];
  char bound[MAX_SLOTS] = {0};
  if (kwnames != NULL || n != self->nargs || !fast_checks(self, argv, args, slots, bound)) {
    if (self->fallback == NULL) {
      PyErr_SetString(PyExc_RuntimeError, "_tvm_host_caller: the caller was cleared");
      return NULL;
    }
    return PyObject_Vectorcall(self->fallback, argv, nargsf, kwnames);
  }
  for (Py_ssize_t v = 0; v < self->nvalues; ++v) {
    const int i = self->value_index[v];
    if (self->value_from[v] == FROM_ARG) values[v] = args[i];
    else values[v].i = slots[i];
  }
  int32_t status;
  Py_BEGIN_ALLOW_THREADS
  status = self->fn(values);
  Py_END_ALLOW_THREADS
  if (status != 0) {
    const char* msg = self->error_fn ? self->error_fn() : NULL;
    PyErr_Format(self->error_cls ? self->error_cls : PyExc_RuntimeError, "%U: %s", self->name,
                 (msg && msg[0]) ? msg : "failed with no message");
    return NULL;
  }
  Py_RETURN_NONE;
}

static PyObject* caller_new(PyTypeObject* type, PyObject* a, PyObject* kw) {
  static char* names[] = {"fn", "error_fn", "checks", "values", "fallback", "error_cls", "name",
                          NULL};
  unsigned long long fn = 0, err = 0;
  PyObject *checks, *values, *fallback, *error_cls, *name;
  if (!PyArg_ParseTupleAndKeywords(a, kw, "KKOOOOU", names, &fn, &err, &checks, &values,
                                   &fallback, &error_cls, &name))
    return NULL;
  if (fn == 0 || !PyCallable_Check(fallback)) {
    PyErr_SetString(PyExc_ValueError, "_tvm_host_caller.Caller: fn must be an address and "
                                      "fallback callable");
    return NULL;
  }
  Caller* self = (Caller*)type->tp_alloc(type, 0);
  if (self == NULL) return NULL;
  self->vectorcall = caller_vectorcall;
  self->fn = (tvm_packed_fn)(uintptr_t)fn;
  self->error_fn = (tvm_error_fn)(uintptr_t)err;
  Py_INCREF(fallback);
  self->fallback = fallback;
  Py_INCREF(error_cls);
  self->error_cls = error_cls;
  Py_INCREF(name);
  self->name = name;
  if (parse_plan(self, checks, values) != 0) {
    Py_DECREF(self);
    return NULL;
  }
  return (PyObject*)self;
}

/* The fallback is usually a bound method of the object that holds this Caller: a cycle, which
 * the garbage collector can break only if it sees the references. */
static int caller_traverse(Caller* self, visitproc visit, void* arg) {
  Py_VISIT(self->fallback);
  Py_VISIT(self->error_cls);
  return 0;
}

static int caller_clear(Caller* self) {
  Py_CLEAR(self->fallback);
  Py_CLEAR(self->error_cls);
  return 0;
}

static void caller_dealloc(Caller* self) {
  PyObject_GC_UnTrack(self);
  caller_clear(self);
  Py_CLEAR(self->name);
  Py_TYPE(self)->tp_free((PyObject*)self);
}

static PyTypeObject CallerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "_tvm_host_caller.Caller",
    .tp_basicsize = sizeof(Caller),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_HAVE_GC,
    .tp_traverse = (traverseproc)caller_traverse,
    .tp_clear = (inquiry)caller_clear,
    .tp_vectorcall_offset = offsetof(Caller, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_new = caller_new,
    .tp_dealloc = (destructor)caller_dealloc,
    .tp_doc = "A kernel's packed entry point behind precomputed argument checks.",
};

static struct PyModuleDef caller_module = {
    PyModuleDef_HEAD_INIT, "_tvm_host_caller",
    "The fast call path of tvm host executables.", -1, NULL,
};

PyMODINIT_FUNC PyInit__tvm_host_caller(void) {
  import_array();
  if (PyType_Ready(&CallerType) < 0) return NULL;
  PyObject* m = PyModule_Create(&caller_module);
  if (m == NULL) return NULL;
  Py_INCREF(&CallerType);
  if (PyModule_AddObject(m, "Caller", (PyObject*)&CallerType) < 0) {
    Py_DECREF(&CallerType);
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
