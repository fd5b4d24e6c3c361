package io.rdmx.shuffle;

/** Rank 1 of a two-process shuffle that sends a few rows and then hangs until it is killed. */
public final class ShuffleChild {
    private ShuffleChild() {
    }

    /**
     * @param args provider, job, members ("-" for none)
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        ShuffleConfig.Builder b = ShuffleConfig.builder(1, 2, 1).provider(args[0]).job(args[1]);
        if (!args[2].equals("-")) {
            b.members(java.util.List.of(args[2].split(",")));
        }
        ShuffleService svc = ShuffleService.open(b.build());
        Exchange<Integer> ex = svc.exchange(1, Routing.hash(x -> x), RowSerializer.INT);
        Worker w = svc.worker(0);
        w.consume(ex, x -> { });
        for (int i = 0; i < 100; i++) {
            w.send(ex, i);
        }
        w.flushAll();
        System.out.println("SENT");
        System.out.flush();
        Thread.sleep(600_000);
    }
}
