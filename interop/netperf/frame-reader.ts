import { FixedFramer } from "../../lib/fixed-framer.ts";
import { MESSAGE_SIZE } from "./words.ts";

/** Reassembles netperf's 656-byte control messages from arbitrary chunks. */
export class FrameReader extends FixedFramer {
  constructor() {
    super(MESSAGE_SIZE);
  }
}
