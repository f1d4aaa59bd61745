import { deadlines } from "@phasebound/testkit/contract"
import { registerFamilies } from "./register.js"

registerFamilies([deadlines])
