/**
 * {@code rdmx doctor}: for each provider, whether it can work on this machine and exactly why not, with the fix.
 *
 * <p>Everything the diagnosis reads comes through a {@link io.rdmx.cli.doctor.Host}: a file-system root under which
 * {@code /sys}, {@code /dev}, {@code /proc/self} and the library directories are looked up, the limits reader, the
 * JVM facts and the {@code ldconfig -p} output. Tests point it at fixture trees; {@link
 * io.rdmx.cli.doctor.Host#system()} is this machine.
 */
package io.rdmx.cli.doctor;
