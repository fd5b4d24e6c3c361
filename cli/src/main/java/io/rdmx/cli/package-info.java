/** The {@code rdmx} command line: {@code info} (providers usable here and a CPU summary) and {@code demo}. */
package io.rdmx.cli;
