/**
 * The verbs provider's native interface: struct layouts and constants of libibverbs ({@code infiniband/verbs.h})
 * and librdmacm ({@code rdma/rdma_cma.h}, {@code rdma/rdma_verbs.h}) for {@code java.lang.foreign} calls. Every
 * offset and constant here is checked against the installed headers by a test that compiles a C program with
 * {@code offsetof}. No JNI, no native code of ours.
 */
package io.rdmx.verbs;
