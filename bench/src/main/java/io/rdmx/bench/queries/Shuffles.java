package io.rdmx.bench.queries;

import io.rdmx.bench.shuffle.NioShuffleTransport;
import io.rdmx.shuffle.ShuffleConfig;
import io.rdmx.shuffle.ShuffleService;
import io.rdmx.transport.RdmxException;
import java.util.List;

/** Opens a shuffle service on an rdmx provider, or on the sockets middleware (the paper's baseline). */
final class Shuffles {
    /** The baseline's name. */
    static final String SOCKETS = "sockets";

    private Shuffles() {
    }

    /**
     * @param provider an rdmx provider name ({@link ShuffleConfig#PROVIDERS}) or {@value #SOCKETS}
     * @param rank this process
     * @param processes P
     * @param workers W
     * @param members host:port per rank, or null (shm and loopback need none)
     * @param job the job name (shm directories)
     * @return the joined service
     * @throws RdmxException if it cannot join
     */
    static ShuffleService open(String provider, int rank, int processes, int workers, List<String> members,
                               String job) throws RdmxException {
        boolean sockets = provider.equals(SOCKETS);
        ShuffleConfig.Builder b = ShuffleConfig.builder(rank, processes, workers).provider(sockets ? "tcp" : provider)
            .job(job);
        if (members != null) {
            b.members(members);
        }
        return sockets ? ShuffleService.open(b.build(), NioShuffleTransport::open) : ShuffleService.open(b.build());
    }
}
