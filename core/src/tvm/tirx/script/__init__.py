"""Seed-compatible location of the script builder (``tvm.tirx.script.builder.ir``)."""
