import { redaction } from "@phasebound/testkit/contract"
import { registerFamilies } from "./register.js"

registerFamilies([redaction])
