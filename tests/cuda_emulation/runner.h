// Pasted after the CUDA source (see prelude.h): emu_run(kernel, args, grid, threads) runs every
// block of the grid; kernels take one argument of type EMU_ARG.
typedef void (*emu_kernel)(EMU_ARG);
static emu_kernel emu_fn;
static EMU_ARG emu_arg;
static bool emu_done[EMU_THREADS];
static void emu_entry() {
    emu_fn(emu_arg);
    emu_done[emu_tid] = true;  // back to the scheduler through uc_link
}
extern "C" int emu_run(void* fn, const EMU_ARG* arg, unsigned gx, unsigned gy, unsigned gz, unsigned threads) {
    const size_t STACK = 1 << 16;
    static char* stacks = (char*)malloc(STACK * EMU_THREADS);
    if (threads > EMU_THREADS) return -1;
    emu_fn = (emu_kernel)fn;
    emu_arg = *arg;
    gridDim = {gx, gy, gz};
    blockDim = {threads, 1, 1};
    for (unsigned z = 0; z < gz; ++z)
        for (unsigned y = 0; y < gy; ++y)
            for (unsigned x = 0; x < gx; ++x) {
                blockIdx = {x, y, z};
                for (unsigned t = 0; t < threads; ++t) {
                    getcontext(&emu_ctx[t]);
                    emu_ctx[t].uc_stack.ss_sp = stacks + t * STACK;
                    emu_ctx[t].uc_stack.ss_size = STACK;
                    emu_ctx[t].uc_link = &emu_main;
                    makecontext(&emu_ctx[t], emu_entry, 0);
                    emu_done[t] = false;
                    emu_gen[t] = 0;
                }
                for (bool left = true; left;) {  // a pass: each live thread runs to its next barrier or its end
                    left = false;
                    for (unsigned t = 0; t < threads; ++t) {
                        if (emu_done[t]) continue;
                        emu_tid = (int)t;
                        threadIdx = {t, 0, 0};
                        swapcontext(&emu_main, &emu_ctx[t]);
                        left |= !emu_done[t];
                    }
                }
            }
    return 0;
}
