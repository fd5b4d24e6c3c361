package io.rdmx.bench.queries;

/**
 * Checks the three queries across processes on one provider against their single-process evaluation and prints
 * {@code QUERIES OK over <provider>} (exit 0) or why not (exit 1): the entry point of the run over {@code verbs}
 * on Soft-RoCE ({@code scripts/softroce-test.sh}), where the endpoints' host is given by
 * {@value QueriesRunner#HOST_PROP}.
 */
public final class QueriesCheck {
    private QueriesCheck() {
    }

    /**
     * @param args provider, processes, workers, warehouses
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        String provider = args[0];
        int processes = Integer.parseInt(args[1]);
        int workers = Integer.parseInt(args[2]);
        int warehouses = Integer.parseInt(args[3]);
        Tpcc.Tables all = Tpcc.generate(warehouses, 0, 1);
        StringBuilder line = new StringBuilder();
        try (QueriesRunner r = new QueriesRunner(provider, processes, workers, warehouses)) {
            for (int q = 1; q <= 3; q++) {
                String expected = TpccQueries.digest(TpccQueries.render(q, all));
                QueriesRunner.Timing t = r.run(q, 0, expected);
                line.append(String.format(java.util.Locale.ROOT, "; Q%d %s in %.2f s", q, t.digest(), t.seconds()));
            }
        } catch (Exception e) {
            System.out.println("QUERIES FAILED over " + provider + ": " + e);
            System.exit(1);
        }
        System.out.println("QUERIES OK over " + provider + ": " + processes + " processes x " + workers
            + " workers, TPC-C scale factor " + warehouses + ", answers equal to the single-process evaluation"
            + line);
        System.exit(0);
    }
}
