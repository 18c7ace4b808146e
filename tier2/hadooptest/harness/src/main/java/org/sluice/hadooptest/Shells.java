package org.sluice.hadooptest;

import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FsShell;
import org.apache.hadoop.util.ToolRunner;

/**
 * Runs several FsShell commands in one JVM (a JVM start costs seconds).
 * The arguments are the commands' arguments, each command ended by "--end";
 * after each command it prints a newline and "@@@ shells exit N" (FsShell's
 * exit status) and a newline on stdout and on stderr, so a test can split
 * both streams per command, binary output (-cat) included.
 */
public final class Shells {
  private static final String MARK = "@@@ shells exit ";

  private Shells() {}

  public static void main(String[] args) throws Exception {
    List<String> cmd = new ArrayList<>();
    for (String a : args) {
      if (!a.equals("--end")) {
        cmd.add(a);
        continue;
      }
      int rc;
      try {
        rc = ToolRunner.run(new FsShell(new Configuration()), cmd.toArray(new String[0]));
      } catch (Exception e) {
        System.err.println("Shells: " + e);
        rc = -100;
      }
      System.out.flush();
      System.out.print("\n" + MARK + rc + "\n");
      System.out.flush();
      System.err.print("\n" + MARK + rc + "\n");
      System.err.flush();
      cmd.clear();
    }
    System.exit(0);
  }
}
