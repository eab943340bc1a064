/* Each device's first kernel at engine open (host/engine/first_kernel.c):
   one work-item writes a known word, read back within a time limit. */
__kernel void tdm_first_kernel(__global uint *out)
{
    out[0] = 0x74646d31u; /* "tdm1" */
}

/* The same word, then a wait for a word that nobody writes: a device that
   never finishes, on purpose (the test hook TANDEM_TEST_HANG). The reads are
   volatile, so the loop is not assumed to end. A kernel of its own name, so
   that PoCL's launch guard (keyed by name) does not hold the other devices'
   first kernels behind it. */
__kernel void tdm_first_kernel_hang(__global volatile uint *out)
{
    out[0] = 0x74646d31u;
    while (out[0] != 0u)
        ;
}
