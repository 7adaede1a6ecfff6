"""What the shader-style backends share: GPUs programmed through compute shaders (tvm-backend-
vulkan's GLSL, tvm-backend-webgpu's WGSL), where a kernel is one shader module with its buffers
bound in order, its scalars in one constant block and its workgroup size set per launch.

* :mod:`tvm.shader.codegen`: :class:`~tvm.shader.codegen.ShaderCodegen`, core's C-style codegen
  turned into one shader per kernel (the language's spelling stays in each backend);
* :mod:`tvm.shader.executable`: the executable of such a backend (launch plans run through the
  backend's runtime) and the checks of its launch plans;
* :mod:`tvm.shader.demo`: the demo kernels built from tile primitives at workgroup (CTA) scope;
* :mod:`tvm.shader.device`: the probe behind each backend's ``runtime.unavailable_reason()``.

Nothing is imported here; each backend imports the submodules it uses.
"""
