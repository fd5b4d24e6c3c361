/**
 * The code snippets of the documentation ({@code README.md}, {@code docs/}), compiled and run by this module's
 * tests. Each snippet is the region of a class between {@code // tag::name[]} and {@code // end::name[]}; a
 * test checks that every snippet in the documents is identical to its region, so the documents show code that
 * compiles and works.
 */
package io.rdmx.examples;
