import { noReplay } from "@phasebound/testkit/contract"
import { registerFamilies } from "./register.js"

registerFamilies([noReplay])
