/**
 * The {@code shm} provider, the embedded default: processes on one host. Every node owns a directory (mode
 * 0700) under {@code /dev/shm}; its remotely writable regions are memory-mapped files there (mode 0600), and a
 * WRITE is a copy by the posting thread straight into the peer's mapping (no peer CPU). SEND/RECV, the
 * notifications of WRITE_WITH_IMM and acknowledgements go over a Unix-domain socket, whose closing reveals the
 * peer's death.
 */
package io.rdmx.transport.shm;
