/**
 * A Spark shuffle manager over rdmx: {@link io.rdmx.spark.RdmxShuffleManager}, selected by class name with
 * {@code spark.shuffle.manager}. Map outputs are written by Spark's sort shuffle; each executor serves its blocks
 * over rdmx ring channels ({@link io.rdmx.spark.BlockServer}, {@link io.rdmx.spark.FetchProtocol}); reduce tasks
 * fetch them bounded in flight ({@link io.rdmx.spark.BlockFetcher}) over the provider chosen per peer
 * ({@link io.rdmx.spark.RdmxEndpoints}). A lost or unreachable peer raises Spark's FetchFailedException within
 * the peer timeout, so Spark's stage retry takes over. Configuration: {@link io.rdmx.spark.RdmxShuffleConf}.
 */
package io.rdmx.spark;
