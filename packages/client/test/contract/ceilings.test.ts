import { ceilings } from "@phasebound/testkit/contract"
import { registerFamilies } from "./register.js"

registerFamilies([ceilings])
