package io.rdmx.shuffle;

import java.util.List;

/**
 * A snapshot of a shuffle service's counters ({@link ShuffleService#metrics()}). Worker counters are read
 * without synchronization: exact once the workers stopped, approximate while they run.
 *
 * @param providers per rank, the provider this process reaches it over ({@code null} for this rank)
 * @param networkRecords records (packs of rows, object rows, end-of-stream marks) sent over the network
 * @param rowsSent rows offered successfully by this process's workers
 * @param backPressured offers and flushes that found an outgoing buffer full
 * @param inboxBytes bytes set aside in the workers' inboxes now
 * @param ranksGone ranks a worker saw leave after they ended every stream it consumed (the largest count of any
 *     worker)
 */
public record ShuffleMetrics(List<String> providers, long networkRecords, long rowsSent, long backPressured,
                             long inboxBytes, int ranksGone) {
}
